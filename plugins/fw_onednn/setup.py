"""The one compiled part of fw-onednn: ``fw_onednn._native``, the per-call path into oneDNN
(see its source). It needs Python's and NumPy's headers and no oneDNN headers or library: the
oneDNN functions it calls are handed to it at import."""

import numpy
from setuptools import Extension, setup

setup(ext_modules=[Extension("fw_onednn._native", ["fw_onednn/_native.c"],
                             include_dirs=[numpy.get_include()],
                             extra_compile_args=["-O2", "-Wall", "-Werror"])])
