"""fw_onednn's kernels for ``cpu``: matmul, bmm, linear and two-operand einsum on float32, through
cached primitives.

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
oneDNN accumulates in float32 in its own order.
"""

from __future__ import annotations

import math

import numpy as np

from fw_core.errors import UnsupportedError

from . import equations, layouts, primitive
from .arguments import whole_number
from .cache import PRIMITIVES
from .catalog import TAKES

F32 = np.dtype(np.float32)

#: primitive kinds: the op, the dtype and what is baked into the primitive (a cache key's head)
MATMUL, LINEAR, LINEAR_BIAS, EINSUM = "matmul:f32", "linear:f32", "linear+bias:f32", "einsum:f32"


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


def _build(planner, *args):
    """The primitive for ``planner(*args)``'s plan, or a Refusal saying why not."""
    plan = planner(*args)
    if isinstance(plan, str):
        return primitive.Refusal(plan)
    small = _too_small(plan.src, plan.dst)
    if small:
        return primitive.Refusal(small)
    return primitive.matmul(plan)


# -- guards: each returns the call of the primitive it found, or None (fw_cpu's call) ---------
def takes_matmul(a, b):
    """The run of ``matmul(a, b)`` when fw_onednn's matmul takes it, else None."""
    # a.size * b.size bounds the product's multiply-adds from above: a small product is refused
    # here for ~0.1 µs, without building its key (~0.4 µs)
    if a.dtype is not F32 or b.dtype is not F32 or a.size * b.size < _min_work:
        return None
    key = (MATMUL, a.shape, a.strides, b.shape, b.strides)
    return (_lookup(key) or _add(key, _build, layouts.matmul, a.shape, a.strides, b.shape,
                                  b.strides)).call


def takes_bmm(a, b):
    """The run of ``bmm(a, b)`` when fw_onednn's bmm takes it: as matmul, for two 3-d operands
    with one batch size (bmm does not broadcast; fw_cpu raises for the rest)."""
    if a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0]:
        return None
    return takes_matmul(a, b)


def takes_linear(x, weight, bias=None):
    """The run of ``linear(x, weight, bias)`` when fw_onednn's linear takes it, else None."""
    if x.dtype is not F32 or weight.dtype is not F32 or x.size * weight.size < _min_work:
        return None
    if bias is None:
        kind, bias_shape, bias_strides = LINEAR, None, None
    elif bias.dtype is F32:
        kind, bias_shape, bias_strides = LINEAR_BIAS, bias.shape, bias.strides
    else:
        return None
    key = (kind, x.shape, x.strides, weight.shape, weight.strides, bias_shape, bias_strides)
    return (_lookup(key) or _add(key, _build, layouts.linear, x.shape, x.strides, weight.shape,
                                  weight.strides, bias_shape, bias_strides)).call


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
