"""fw's CUDA device plugin: CuPy arrays, fw_cpu's xp-generic kernels run with ``xp=cupy``,
CUDA C fused kernels, and CuPy's memory pool reported under fw's lifecycle tags.

Importing it needs no GPU and not even CuPy: without them the ``cuda`` device is listed by
``fw plugins`` as "no device" with the reason.
"""

__version__ = "0.1.0"
