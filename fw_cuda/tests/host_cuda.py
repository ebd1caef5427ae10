"""Run CUDA C kernel source on the host, serially, to check what it computes without a GPU.

The source is compiled with ``g++ -x c++`` under a prelude that makes the CUDA keywords plain
C++: ``__global__`` is empty and there is one block (grid-stride loops walk every row in turn).
With ``threads=1`` that block has one thread, so block-stride loops walk every element and
``__syncthreads()`` does nothing. With ``threads=N`` the block is N host threads:
``threadIdx`` is thread-local, ``__shared__`` arrays are function statics the N threads share
(exactly shared memory's scope), and ``__syncthreads()`` is a ``std::barrier`` of N, so
shared-memory tree reductions run with their real interleaving and a missing barrier shows as
a wrong or varying result. ``__half`` is GCC's ``_Float16`` with the intrinsic conversions
(both round to nearest even). The text checked is the text the GPU would compile, not a Python
re-implementation.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np

HAS_GXX = shutil.which("g++") is not None

_COMMON = """#include <math.h>
#include <stdio.h>
struct fw_dim3 { unsigned x; };
typedef _Float16 __half;
static inline float __half2float(__half h) { return (float)h; }
static inline __half __float2half(float f) { return (__half)f; }
static inline __half __double2half(double d) { return (__half)d; }
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __restrict__ __restrict
"""

#: CUDA's round-to-nearest arithmetic intrinsics (no contraction into multiply-adds), as the
#: IEEE operations they are
_INTRINSICS = "\n".join(
    f"static inline {t} __{p}{op}_rn({t} a, {t} b) {{ return a {sym} b; }}"
    for t, p in (("float", "f"), ("double", "d"))
    for op, sym in (("mul", "*"), ("add", "+"), ("sub", "-"), ("div", "/"))) + """
static inline float __fsqrt_rn(float a) { return sqrtf(a); }
static inline double __dsqrt_rn(double a) { return sqrt(a); }
"""

_ONE_THREAD = """static const fw_dim3 blockIdx = {0}, threadIdx = {0};
static const fw_dim3 blockDim = {1}, gridDim = {1};
#define __syncthreads()
"""

_THREADS = """#include <barrier>
#include <thread>
#include <vector>
static const fw_dim3 blockIdx = {0}, blockDim = {THREADS}, gridDim = {1};
static thread_local fw_dim3 threadIdx = {0};
static std::barrier<> fw_block_barrier(THREADS);
#define __syncthreads() fw_block_barrier.arrive_and_wait()
"""


def prelude(threads: int = 1) -> str:
    """The C++ text put before a kernel's source: the CUDA keywords, and one block of
    ``threads`` host threads (``threadIdx`` thread-local and ``__syncthreads()`` a barrier of
    ``threads`` when more than one; the runner starts the threads)."""
    block = _ONE_THREAD if threads == 1 else _THREADS.replace("THREADS", str(threads))
    return _COMMON + _INTRINSICS + block


def launch(call: str, threads: int) -> list[str]:
    """Lines running the C statement ``call`` as one block of ``threads`` host threads (the
    variables it names are captured by value)."""
    if threads == 1:
        return [f"    {call}"]
    return ["    std::vector<std::thread> block;",
            f"    for (unsigned t = 0; t < {threads}; ++t)",
            f"        block.emplace_back([=] {{ threadIdx.x = t; {call} }});",
            "    for (auto& thread : block) thread.join();"]


_CTYPES = {"float16": "__half", "float32": "float", "float64": "double", "int8": "signed char",
           "int16": "short", "int32": "int", "int64": "long long", "uint8": "unsigned char",
           "bool": "bool"}


def run(tmp_path, source: str, kernel: str, arrays: list[np.ndarray],
        outputs: list[tuple[np.dtype, tuple]], scalars: list[str],
        threads: int = 1) -> list[np.ndarray]:
    """Call ``kernel(in0.., out0.., *scalars)`` of ``source`` on the host as one block of
    ``threads`` threads; return the outputs.

    ``arrays`` are the inputs (passed as pointers, in order), ``outputs`` the (dtype, shape) of
    each output pointer after them, ``scalars`` the C text of the trailing arguments (``"7LL"``).
    Includes in ``source`` are dropped (the prelude stands in for ``cuda_fp16.h``).
    """
    kept = [line for line in source.splitlines() if not line.startswith("#include")]
    lines = [prelude(threads), *kept, "int main() {"]
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
    lines += launch(f"{kernel}({', '.join(args + list(scalars))});", threads)
    for m, (dtype, shape) in enumerate(outputs):
        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
        lines.append(f'    FILE* g{m} = fopen("out{m}.bin", "wb"); '
                     f"fwrite(out{m}, 1, {size}, g{m}); fclose(g{m});")
    lines += ["    return 0;", "}", ""]
    (tmp_path / "host.cpp").write_text("\n".join(lines))
    subprocess.run(["g++", "-O1", "-std=c++20", "-pthread", "-x", "c++", "host.cpp", "-o",
                    "host", "-lm"], cwd=tmp_path, check=True, capture_output=True, text=True)
    subprocess.run(["./host"], cwd=tmp_path, check=True)
    return [np.fromfile(tmp_path / f"out{m}.bin", dtype).reshape(shape)
            for m, (dtype, shape) in enumerate(outputs)]
