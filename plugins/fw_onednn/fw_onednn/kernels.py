"""fw_onednn's kernels for ``cpu``: matmul, bmm, linear and two-operand einsum on float32 (matmul,
bmm and linear on bfloat16 too), through cached primitives.

Each op has a guard and a kernel (``fw_core.kernel_chain``): the guard takes a call when every
operand is float32, the product is large enough for oneDNN to beat NumPy (see
:func:`set_min_work`) and oneDNN has a JIT implementation for the operands' shapes and strides,
as oneDNN itself answers when asked for the primitive (:mod:`fw_onednn.primitive`); fw_cpu's
kernel runs every other call (float64, integers, float16, small, matrix-vector or zero-size
products, strides oneDNN serves only with its reference loops, shapes fw must reject with its
own error). The answer is cached with the primitive (:mod:`fw_onednn.cache`), so after the first
call of a layout the guard costs one dictionary lookup. A guard that takes the call returns the
primitive's ``call`` (its execute, bound to the primitive), which the chain runs in place of the
kernel: what the guard found reaches the execute without a second lookup or a thread-local
hand-over (~0.25 µs per call). The kernels run the same path on their own, guard included, for
a caller that holds no chain.

The results are those of fw_cpu's kernels (``fw_cpu/kernels/linalg.py``) to float32 rounding:
oneDNN accumulates in float32 in its own order. bfloat16 products are oneDNN's bf16 matmul
(bf16 operands and result, a float32 accumulator and bias, rounded to nearest even once), where
the CPU has the bf16 instructions (avx512_bf16 or AMX: oneDNN refuses the primitive otherwise,
and fw_cpu's float32 path runs); fw_cpu computes the same in float32 and rounds once, so the two
differ by at most one bfloat16 rounding of float32 sums taken in another order.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from fw_core.dtypes import bfloat16
from fw_core.errors import UnsupportedError

from . import capi, equations, execute, layouts, primitive
from .arguments import whole_number
from .cache import PRIMITIVES
from .catalog import TAKES

F32 = np.dtype(np.float32)
BF16 = bfloat16.numpy

#: primitive kinds: the op, the dtype and what is baked into the primitive (a cache key's head)
MATMUL, LINEAR, LINEAR_BIAS, EINSUM = "matmul:f32", "linear:f32", "linear+bias:f32", "einsum:f32"
MATMUL_BF16, LINEAR_BF16, LINEAR_BIAS_BF16 = "matmul:bf16", "linear:bf16", "linear+bias:bf16"


_lookup, _add = PRIMITIVES.lookup, PRIMITIVES.add


#: the fewest multiply-adds oneDNN takes by default: below, its per-call cost (OpenMP fork and
#: join, brgemm set-up: 2–5 µs) loses to fw_cpu's single NumPy call (benchmarks/crossover.py)
DEFAULT_MIN_WORK = 1 << 20
_min_work, _matrix_vector = DEFAULT_MIN_WORK, False


def set_min_work(multiply_adds: int, *, matrix_vector: bool = False) -> None:
    """Leave products of fewer ``multiply_adds`` (batch × M × N × K), and matrix-vector
    products unless ``matrix_vector``, to fw_cpu, whose NumPy call costs less for them.

    The defaults (2**20, no matrix-vector products: oneDNN 3.2 runs those at ~0.6x NumPy's
    speed) are the crossover measured on a 2-core AVX-512 machine; ``benchmarks/crossover.py``
    measures it on yours. ``set_min_work(0, matrix_vector=True)`` sends every product oneDNN
    can run to it. Clears the primitive cache, which holds the old answers.

    Raises:
        ArgumentError: ``multiply_adds`` is not an integer of at least 0.
    """
    whole_number(multiply_adds, least=0, setter="fw_onednn.set_min_work", name="multiply_adds",
                 example="fw_onednn.set_min_work(2**20)")
    global _min_work, _matrix_vector
    _min_work, _matrix_vector = multiply_adds, bool(matrix_vector)
    PRIMITIVES.clear()


def _too_small(src: primitive.Layout, dst: primitive.Layout) -> str | None:
    """Why fw_cpu runs a product faster than oneDNN would, or None."""
    m, n = dst.dims[-2:]
    if (m == 1 or n == 1) and not _matrix_vector:
        return "a matrix-vector product: oneDNN's matmul runs it at ~0.6x NumPy's speed"
    work = math.prod(dst.dims) * src.dims[-1]
    if work < _min_work:
        return f"{work} multiply-adds, under {_min_work}: fw_cpu's NumPy call costs less"
    return None


def _planned(planner, *args):
    """``planner(*args)``'s plan, or a Refusal saying why oneDNN should not run it."""
    plan = planner(*args)
    if isinstance(plan, str):
        return primitive.Refusal(plan)
    small = _too_small(plan.src, plan.dst)
    return primitive.Refusal(small) if small else plan


def _build(planner, *args):
    """The primitive for ``planner(*args)``'s plan, or a Refusal saying why not."""
    plan = _planned(planner, *args)
    return plan if isinstance(plan, primitive.Refusal) else primitive.matmul(plan)


def _build_bf16(planner, *args):
    """As :func:`_build`, every operand bfloat16 (the planners' byte strides given as
    :func:`_f32_bytes`); the primitive's ``call`` returns a bfloat16 array."""
    plan = _planned(planner, *args)
    if isinstance(plan, primitive.Refusal):
        return plan
    bf16 = functools.partial(dataclasses.replace, data_type=capi.BF16)
    built = primitive.matmul(dataclasses.replace(
        plan, src=bf16(plan.src), weights=bf16(plan.weights), dst=bf16(plan.dst),
        bias=None if plan.bias is None else bf16(plan.bias)))
    if built.serves:
        built.call = functools.partial(_call_bf16, built.handles, built.out_shape)
    return built


def _call_bf16(handles, out_shape, *arrays, **attributes):
    """A bfloat16 primitive on ``arrays``, its result in a new bfloat16 array (the native
    ``execute.call`` allocates float32); ``attributes`` are built into the primitive."""
    out = np.empty(out_shape, BF16)
    capi.check(execute.run(handles, *arrays, out), None, "dnnl_primitive_execute")
    return out


def _f32_bytes(strides: tuple[int, ...]) -> tuple[int, ...]:
    """A bfloat16 array's byte strides as the planners count them, in float32 bytes
    (``layouts.ITEMSIZE``): a stride of ``s`` bytes is ``s / 2`` elements."""
    return tuple(2 * s for s in strides)


# -- guards: each returns the call of the primitive it found, or None (fw_cpu's call) ---------
def takes_matmul(a, b):
    """The run of ``matmul(a, b)`` when fw_onednn's matmul takes it, else None."""
    # a.size * b.size bounds the product's multiply-adds from above: a small product is refused
    # here for ~0.1 µs, without building its key (~0.4 µs)
    if a.dtype is not F32 or b.dtype is not F32 or a.size * b.size < _min_work:
        return _takes_matmul_bf16(a, b) if a.dtype is BF16 else None
    key = (MATMUL, a.shape, a.strides, b.shape, b.strides)
    return (_lookup(key) or _add(key, _build, layouts.matmul, a.shape, a.strides, b.shape,
                                  b.strides)).call


def _takes_matmul_bf16(a, b):
    """:func:`takes_matmul` for a bfloat16 ``a``."""
    if b.dtype is not BF16 or a.size * b.size < _min_work:
        return None
    key = (MATMUL_BF16, a.shape, a.strides, b.shape, b.strides)
    return (_lookup(key) or _add(key, _build_bf16, layouts.matmul, a.shape,
                                  _f32_bytes(a.strides), b.shape, _f32_bytes(b.strides))).call


def takes_bmm(a, b):
    """The run of ``bmm(a, b)`` when fw_onednn's bmm takes it: as matmul, for two 3-d operands
    with one batch size (bmm does not broadcast; fw_cpu raises for the rest)."""
    if a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0]:
        return None
    return takes_matmul(a, b)


def takes_linear(x, weight, bias=None):
    """The run of ``linear(x, weight, bias)`` when fw_onednn's linear takes it, else None."""
    if x.dtype is not F32 or weight.dtype is not F32 or x.size * weight.size < _min_work:
        return _takes_linear_bf16(x, weight, bias) if x.dtype is BF16 else None
    if bias is None:
        kind, bias_shape, bias_strides = LINEAR, None, None
    elif bias.dtype is F32:
        kind, bias_shape, bias_strides = LINEAR_BIAS, bias.shape, bias.strides
    else:
        return None
    key = (kind, x.shape, x.strides, weight.shape, weight.strides, bias_shape, bias_strides)
    return (_lookup(key) or _add(key, _build, layouts.linear, x.shape, x.strides, weight.shape,
                                  weight.strides, bias_shape, bias_strides)).call


def _takes_linear_bf16(x, weight, bias):
    """:func:`takes_linear` for a bfloat16 ``x`` (the weight and bias bfloat16 too)."""
    if weight.dtype is not BF16 or x.size * weight.size < _min_work:
        return None
    if bias is None:
        kind, bias_shape, bias_strides = LINEAR_BF16, None, None
    elif bias.dtype is BF16:
        kind, bias_shape, bias_strides = LINEAR_BIAS_BF16, bias.shape, _f32_bytes(bias.strides)
    else:
        return None
    key = (kind, x.shape, x.strides, weight.shape, weight.strides, bias_shape, bias_strides)
    return (_lookup(key) or _add(key, _build_bf16, layouts.linear, x.shape, _f32_bytes(x.strides),
                                  weight.shape, _f32_bytes(weight.strides), bias_shape,
                                  bias_strides)).call


def takes_einsum(*operands, equation: str):
    """The run of ``einsum(*operands, equation=...)`` when fw_onednn's einsum takes it: two
    float32 operands whose equation is one matrix product of views
    (:mod:`fw_onednn.equations`)."""
    if len(operands) != 2:
        return None
    a, b = operands
    if a.dtype is not F32 or b.dtype is not F32 or a.size * b.size < _min_work:
        return None
    key = (EINSUM, equation, a.shape, a.strides, b.shape, b.strides)
    return (_lookup(key) or _add(key, _build, equations.einsum, equation, a.shape, a.strides,
                                  b.shape, b.strides)).call


# -- kernels: the guard's run, for a caller without a chain -------------------------------------
def _kernel(op: str, guard, takes: str):
    def kernel(*arrays, **attrs):
        """The op through oneDNN, guard included; UnsupportedError for a call it refuses."""
        run = guard(*arrays, **attrs)
        if run is None:
            raise UnsupportedError(f"fw_onednn does not take this call; it takes {takes}", op=op,
                                   hint=f"call fw.ops.kernel({op!r}, 'cpu'), which hands the "
                                   "calls fw_onednn refuses to fw_cpu")
        return run(*arrays, **attrs)

    kernel.__qualname__ = kernel.__name__ = f"onednn_{op}"
    return kernel


#: (op, guard, kernel, what the guard takes) for every op fw_onednn serves
KERNELS = tuple((op, guard, _kernel(op, guard, TAKES[op]), TAKES[op]) for op, guard in (
    ("matmul", takes_matmul),
    ("bmm", takes_bmm),
    ("linear", takes_linear),
    ("einsum", takes_einsum),
))
