"""The generic kernels are module-level functions: importable, documented, named in tracebacks."""

import ast
import functools
import inspect
import pathlib

import numpy as np
import scipy.special

from fw_cpu import kernels

FOLDER = pathlib.Path(kernels.__file__).parent


def test_kernels_builders_only_bind():
    for path in sorted(FOLDER.glob("*.py")):
        tree = ast.parse(path.read_text())
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef) and fn.name == "kernels":
                nested = [n for n in ast.walk(fn) if n is not fn and
                          isinstance(n, (ast.FunctionDef, ast.Lambda))]
                assert nested == [], f"{path.name}: kernels() defines functions"


def test_every_kernel_is_a_namespace_function_or_a_documented_module_function():
    for family in kernels.FAMILIES:
        for name, kernel in family.kernels(np, scipy.special).items():
            fn = kernel
            while isinstance(fn, functools.partial):
                fn = fn.func
            owner = getattr(fn, "__module__", None) or "numpy"  # ufuncs name no module
            assert owner.split(".")[0] in ("numpy", "fw_cpu"), (name, owner)
            if owner.startswith("fw_cpu"):
                assert "<locals>" not in fn.__qualname__, (name, fn.__qualname__)
                assert inspect.getdoc(fn), f"{family.__name__}.{fn.__name__} has no docstring"
