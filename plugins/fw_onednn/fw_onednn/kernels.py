"""fw_onednn's kernels for ``cpu``: matmul, bmm, linear and two-operand einsum on float32, through
cached primitives.

Each op has a guard and a kernel (``fw_core.kernel_chain``): the guard takes a call when every
operand is float32, the product is large enough for oneDNN to beat NumPy (see
:func:`set_min_work`) and oneDNN has a JIT implementation for the operands' shapes and strides,
as oneDNN itself answers when asked for the primitive (:mod:`fw_onednn.primitive`); fw_cpu's
kernel runs every other call (float64, integers, float16, small, matrix-vector or zero-size
products, strides oneDNN serves only with its reference loops, shapes fw must reject with its
own error). The answer is cached with the primitive (:mod:`fw_onednn.cache`), so after the first
call of a layout the guard costs one dictionary lookup. The guard hands the primitive it found
to the kernel through a thread-local slot: the chain calls the kernel right after its guard said
yes, in the same thread, and a second lookup would cost ~0.3 µs more per call.

The results are those of fw_cpu's kernels (``fw_cpu/kernels/linalg.py``) to float32 rounding:
oneDNN accumulates in float32 in its own order.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from . import capi, equations, layouts, primitive
from .arguments import whole_number
from .cache import PRIMITIVES

F32 = np.dtype(np.float32)

#: primitive kinds: the op, the dtype and what is baked into the primitive (a cache key's head)
MATMUL, LINEAR, LINEAR_BIAS, EINSUM = "matmul:f32", "linear:f32", "linear+bias:f32", "einsum:f32"

# what the guards take, in words (fw plugins --verbose); the guards' docstrings give the detail
TAKES = ("float32, at least set_min_work() multiply-adds, any transpose, oneDNN has a JIT "
         "kernel for the layout")
TAKES_EINSUM = "as matmul, for two-operand equations that are one matrix product of views"

# .entry: the primitive the guard just found, for its kernel. It is not cleared after the call
# (~40 ns saved): an evicted primitive lives on until this thread's next guarded call.
_found = threading.local()
_lookup, _add, _empty = PRIMITIVES.lookup, PRIMITIVES.add, np.empty


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


def _build(planner, *args):
    """The primitive for ``planner(*args)``'s plan, or a Refusal saying why not."""
    plan = planner(*args)
    if isinstance(plan, str):
        return primitive.Refusal(plan)
    small = _too_small(plan.src, plan.dst)
    if small:
        return primitive.Refusal(small)
    return primitive.matmul(plan)


# -- guards: each leaves the entry it found in _found.entry for the kernel the chain runs next --
def takes_matmul(a, b) -> bool:
    """Whether fw_onednn's matmul takes ``matmul(a, b)``."""
    # a.size * b.size bounds the product's multiply-adds from above: a small product is refused
    # here for ~0.1 µs, without building its key (~0.4 µs)
    if a.dtype is not F32 or b.dtype is not F32 or a.size * b.size < _min_work:
        return False
    key = (MATMUL, a.shape, a.strides, b.shape, b.strides)
    entry = _lookup(key) or _add(key, _build, layouts.matmul, a.shape, a.strides, b.shape,
                                 b.strides)
    _found.entry = entry
    return entry.serves


def takes_bmm(a, b) -> bool:
    """Whether fw_onednn's bmm takes ``bmm(a, b)``: as matmul, for two 3-d operands with one
    batch size (bmm does not broadcast; fw_cpu raises for the rest)."""
    if a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0]:
        return False
    return takes_matmul(a, b)


def takes_linear(x, weight, bias=None) -> bool:
    """Whether fw_onednn's linear takes ``linear(x, weight, bias)``."""
    if x.dtype is not F32 or weight.dtype is not F32 or x.size * weight.size < _min_work:
        return False
    if bias is None:
        kind, bias_shape, bias_strides = LINEAR, None, None
    elif bias.dtype is F32:
        kind, bias_shape, bias_strides = LINEAR_BIAS, bias.shape, bias.strides
    else:
        return False
    key = (kind, x.shape, x.strides, weight.shape, weight.strides, bias_shape, bias_strides)
    entry = _lookup(key) or _add(key, _build, layouts.linear, x.shape, x.strides, weight.shape,
                                 weight.strides, bias_shape, bias_strides)
    _found.entry = entry
    return entry.serves


def takes_einsum(*operands, equation: str) -> bool:
    """Whether fw_onednn's einsum takes ``einsum(*operands, equation=...)``: two float32
    operands whose equation is one matrix product of views (:mod:`fw_onednn.equations`)."""
    if len(operands) != 2:
        return False
    a, b = operands
    if a.dtype is not F32 or b.dtype is not F32 or a.size * b.size < _min_work:
        return False
    key = (EINSUM, equation, a.shape, a.strides, b.shape, b.strides)
    entry = _lookup(key) or _add(key, _build, equations.einsum, equation, a.shape, a.strides,
                                 b.shape, b.strides)
    _found.entry = entry
    return entry.serves


# -- kernels: run only right after their guard took the call, in the same thread --------------
def run_product(a, b, equation: str | None = None):
    """``a @ b`` (matmul's rules: 1-d operands, broadcast batches), bmm, or a two-operand
    einsum (its ``equation`` is in the primitive already), on the primitive the guard just
    found."""
    run, handles, shape = _found.entry.launch
    out = _empty(shape, F32)
    status = run(handles, a, b, out)
    if status:
        capi.check(status, None, "dnnl_primitive_execute")
    return out


def run_linear(x, weight, bias=None):
    """``x @ weight.T + bias``, the bias added by the primitive :func:`takes_linear` just
    found."""
    run, handles, shape = _found.entry.launch
    out = _empty(shape, F32)
    if bias is None:
        status = run(handles, x, weight, out)
    else:
        status = run(handles, x, weight, bias, out)
    if status:
        capi.check(status, None, "dnnl_primitive_execute")
    return out


#: (op, guard, kernel, what the guard takes) for every op fw_onednn serves
KERNELS = (
    ("matmul", takes_matmul, run_product, TAKES),
    ("bmm", takes_bmm, run_product, TAKES),
    ("linear", takes_linear, run_linear, TAKES),
    ("einsum", takes_einsum, run_product, TAKES_EINSUM),
)
