"""Run CUDA C kernel source on the host, serially, to check what it computes without a GPU.

The source is compiled with ``g++ -x c++`` under a prelude that makes the CUDA keywords plain
C++: ``__global__`` is empty, there is one block of one thread (so grid-stride and block-stride
loops walk every element in turn), ``__shared__`` arrays are static, ``__syncthreads()`` does
nothing. ``__half`` is GCC's ``_Float16`` with the intrinsic conversions (both round to nearest
even). The text checked is the text the GPU would compile, not a Python re-implementation.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np

HAS_GXX = shutil.which("g++") is not None

PRELUDE = """#include <math.h>
#include <stdio.h>
struct fw_dim3 { unsigned x; };
static const fw_dim3 blockIdx = {0}, threadIdx = {0}, blockDim = {1}, gridDim = {1};
typedef _Float16 __half;
static inline float __half2float(__half h) { return (float)h; }
static inline __half __float2half(float f) { return (__half)f; }
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __restrict__ __restrict
#define __syncthreads()
"""

_CTYPES = {"float16": "__half", "float32": "float", "float64": "double", "int8": "signed char",
           "int16": "short", "int32": "int", "int64": "long long", "uint8": "unsigned char",
           "bool": "bool"}


def run(tmp_path, source: str, kernel: str, arrays: list[np.ndarray],
        outputs: list[tuple[np.dtype, tuple]], scalars: list[str]) -> list[np.ndarray]:
    """Call ``kernel(in0.., out0.., *scalars)`` of ``source`` on the host; return the outputs.

    ``arrays`` are the inputs (passed as pointers, in order), ``outputs`` the (dtype, shape) of
    each output pointer after them, ``scalars`` the C text of the trailing arguments (``"7LL"``).
    Includes in ``source`` are dropped (the prelude stands in for ``cuda_fp16.h``).
    """
    kept = [line for line in source.splitlines() if not line.startswith("#include")]
    lines = [PRELUDE, *kept, "int main() {"]
    args = []
    for k, a in enumerate(arrays):
        lines += [f"    static {_CTYPES[a.dtype.name]} in{k}[{max(a.size, 1)}];",
                  f'    FILE* f{k} = fopen("in{k}.bin", "rb");',
                  f"    fread(in{k}, 1, {a.nbytes}, f{k}); fclose(f{k});"]
        args.append(f"in{k}")
        (tmp_path / f"in{k}.bin").write_bytes(np.ascontiguousarray(a).tobytes())
    for m, (dtype, shape) in enumerate(outputs):
        lines.append(f"    static {_CTYPES[np.dtype(dtype).name]} "
                     f"out{m}[{max(int(np.prod(shape)), 1)}];")
        args.append(f"out{m}")
    lines.append(f"    {kernel}({', '.join(args + list(scalars))});")
    for m, (dtype, shape) in enumerate(outputs):
        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
        lines.append(f'    FILE* g{m} = fopen("out{m}.bin", "wb"); '
                     f"fwrite(out{m}, 1, {size}, g{m}); fclose(g{m});")
    lines += ["    return 0;", "}", ""]
    (tmp_path / "host.cpp").write_text("\n".join(lines))
    subprocess.run(["g++", "-O1", "-x", "c++", "host.cpp", "-o", "host", "-lm"], cwd=tmp_path,
                   check=True, capture_output=True, text=True)
    subprocess.run(["./host"], cwd=tmp_path, check=True)
    return [np.fromfile(tmp_path / f"out{m}.bin", dtype).reshape(shape)
            for m, (dtype, shape) in enumerate(outputs)]
