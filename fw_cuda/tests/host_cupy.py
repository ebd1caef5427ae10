"""A test-only stand-in for the few CuPy entry points fw_cuda's launch wrappers use, whose
kernels really run: the CUDA C source given to ``RawKernel`` / ``RawModule`` is compiled by g++
under :func:`host_cuda.prelude` into a shared library and launched through ctypes as one block
of ``block`` host threads (``threadIdx`` thread-local, ``__syncthreads()`` a barrier).

What it is: arrays are NumPy arrays (the "device memory"), every array routine the wrappers
call is NumPy's, and a launch passes the arrays' data pointers and the scalars, in the order
the wrapper gives them, to the very CUDA C text the GPU would compile. So a wrapper's argument
order, scalar types, block size, output allocation and in-place aliasing are exercised end to
end. It checks more than CuPy does: every argument must match its parameter's C type (an
array's dtype its pointer's element type; a scalar must be the NumPy scalar type of its C type,
or a Python bool for ``bool``: Python ints and floats are refused, their conversion by CuPy is
not modelled), and the launch must be a valid CUDA configuration (grid >= 1, block 1..1024).

What it is not: a GPU. ``gridDim`` is 1 and ``blockIdx`` 0 whatever grid is asked (the kernels'
grid-stride loops then cover every element), so the grid a wrapper chooses is only checked for
validity; there are no warps, no device limits beyond the block size, no streams, no memory
protection (an out-of-bounds index corrupts the test process), and the arithmetic is g++'s on
x86 (``__half`` is ``_Float16``). Use with
``monkeypatch.setitem(sys.modules, "cupy", host_cupy)``.
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import pathlib
import re
import shutil
import subprocess
import tempfile

import host_cuda
import numpy as np
from numpy import ascontiguousarray, broadcast_to, empty, empty_like, matmul, swapaxes

#: exactly what the wrappers call: NumPy's routines, and the two kernel classes
__all__ = ["RawKernel", "RawModule", "ascontiguousarray", "broadcast_to", "empty", "empty_like",
           "matmul", "swapaxes"]

#: C scalar type -> (ctypes type, the NumPy scalar type CuPy would pass as that type)
_SCALARS = {"long long": (ctypes.c_longlong, np.int64), "int": (ctypes.c_int, np.int32),
            "double": (ctypes.c_double, np.float64), "float": (ctypes.c_float, np.float32),
            "bool": (ctypes.c_bool, np.bool_)}
#: C element type of a pointer parameter -> NumPy dtype
_ELEMENTS = {"__half": np.float16, "float": np.float32, "double": np.float64, "bool": np.bool_,
             "signed char": np.int8, "short": np.int16, "int": np.int32,
             "long long": np.int64, "unsigned char": np.uint8}
_ENTRY = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(([^)]*)\)')
_BUILD = pathlib.Path(tempfile.mkdtemp(prefix="host_cupy_"))
atexit.register(shutil.rmtree, _BUILD, ignore_errors=True)
_libraries: dict[str, ctypes.CDLL] = {}


def _signatures(code: str) -> dict[str, list[tuple[str, str, bool]]]:
    """{entry point: [(parameter name, C base type, is pointer)]} of ``code``'s kernels."""
    found = {}
    for name, params in _ENTRY.findall(code):
        parsed = []
        for param in filter(None, (p.strip() for p in params.split(","))):
            words = param.replace("*", " * ").split()
            base = " ".join(w for w in words[:-1] if w not in ("const", "__restrict__", "*"))
            parsed.append((words[-1], base, "*" in words))
        found[name] = parsed
    return found


def _library(code: str, block: int) -> ctypes.CDLL:
    """``code`` compiled for blocks of ``block`` threads, with an ``fw_host_<name>`` launcher
    per entry point (cached per source and block size)."""
    key = hashlib.sha1(f"{block}\n{code}".encode()).hexdigest()[:16]
    if key not in _libraries:
        lines = [host_cuda.prelude(block),
                 *(line for line in code.splitlines() if not line.startswith("#include"))]
        for name, params in _signatures(code).items():
            decl = ", ".join(f"{base}{'*' if ptr else ''} {p}" for p, base, ptr in params)
            call = f"{name}({', '.join(p for p, _, _ in params)});"
            lines += [f'extern "C" void fw_host_{name}({decl}) {{',
                      *host_cuda.launch(call, block), "}"]
        source = _BUILD / f"{key}.cpp"
        source.write_text("\n".join(lines) + "\n")
        done = subprocess.run(["g++", "-O1", "-std=c++20", "-pthread", "-shared", "-fPIC", "-x",
                               "c++", str(source), "-o", str(_BUILD / f"{key}.so"), "-lm"],
                              capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"g++ failed on the kernel source:\n{done.stderr}")
        _libraries[key] = ctypes.CDLL(str(_BUILD / f"{key}.so"))
    return _libraries[key]


def _argument(arg, name: str, param: str, base: str, pointer: bool):
    """The ctypes value of ``arg`` for parameter ``param``, or TypeError on a mismatch."""
    if pointer:
        if not isinstance(arg, np.ndarray) or arg.dtype != _ELEMENTS[base]:
            raise TypeError(f"{name}: {param} is a {base}*, got {type(arg).__name__} "
                            f"{getattr(arg, 'dtype', '')}")
        return ctypes.c_void_p(arg.ctypes.data)
    ctype, scalar = _SCALARS[base]
    kind = np.bool_ if type(arg) is bool else type(arg)
    if kind is not scalar:  # CuPy would pass the argument's own bytes, whatever the parameter
        raise TypeError(f"{name}: {param} is a {base} (pass numpy.{scalar.__name__}), "
                        f"got {type(arg).__name__}")
    return ctype(arg)


class _Function:
    """One entry point: ``f((grid,), (block,), args)`` runs it on the host."""

    def __init__(self, code: str, name: str):
        signatures = _signatures(code)
        if name not in signatures:
            raise ValueError(f'no extern "C" __global__ {name} in the source')
        self.code, self.name, self.params = code, name, signatures[name]

    def __call__(self, grid, block, args):
        (grid,), (block,) = tuple(grid), tuple(block)
        if not (1 <= grid < 1 << 31 and 1 <= block <= 1024):
            raise ValueError(f"{self.name}: invalid launch configuration ({grid},), ({block},)")
        if len(args) != len(self.params):
            raise TypeError(f"{self.name} takes {len(self.params)} arguments, got {len(args)}")
        values = [_argument(a, self.name, *p) for a, p in zip(args, self.params)]
        function = getattr(_library(self.code, block), f"fw_host_{self.name}")
        function.restype = None
        function(*values)


class RawKernel(_Function):
    """``cupy.RawKernel(code, name)``: the kernel ``name`` of ``code``."""


class RawModule:
    """``cupy.RawModule(code=...)``: ``get_function(name)`` gives a kernel of the source."""

    def __init__(self, code: str):
        self.code = code

    def get_function(self, name: str) -> _Function:
        return _Function(self.code, name)
