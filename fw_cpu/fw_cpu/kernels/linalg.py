"""Linear algebra kernels: matmul, bmm, einsum, outer and linear.

A two-operand einsum (every linalg VJP, attention's score and value products) runs as one
(batched) matrix product, through a plan cached per equation and shapes; other einsums use the
namespace's ``einsum(..., optimize=True)``. float16 and bfloat16 are computed in float32 (NumPy
has no half-precision BLAS, and the float32 GEMM rounded once is what PyTorch's CPU kernels
give) and rounded back.

The kernels are module-level functions taking ``xp`` first; those that widen the 16-bit floats
take the namespace's float32 dtype (``single``) after it, bound by :func:`kernels`.
"""

from __future__ import annotations

import math
from functools import lru_cache, partial

from fw_core.dtypes import HALF_NUMPY


def _check_dtypes(*arrays) -> None:
    """Raise TypeError unless the operands (None ones skipped) share one non-bool dtype."""
    dtype = arrays[0].dtype
    for a in arrays:
        if a is not None and a.dtype != dtype:
            raise TypeError("operands must share one dtype")
    if dtype.kind == "b":
        raise TypeError("bool operands")


@lru_cache(maxsize=2048)
def _letter_sizes(terms: tuple[str, ...], shapes: tuple[tuple[int, ...], ...]) -> dict:
    """{subscript letter: size} of an einsum, checking that each term fits its shape and that a
    letter's sizes agree (or broadcast from 1)."""
    sizes: dict[str, int] = {}
    for term, shape in zip(terms, shapes):
        if len(term) != len(shape):
            raise ValueError(f"subscripts {term!r} do not fit shape {shape}")
        for c, n in zip(term, shape):
            m = sizes.get(c, 1)
            if n != m and 1 not in (n, m):
                raise ValueError(f"subscript {c!r}: sizes {m} and {n}")
            sizes[c] = n if m == 1 else m
    return sizes


@lru_cache(maxsize=2048)
def _pair_plan(ta: str, tb: str, out: str, shape_a: tuple, shape_b: tuple) -> tuple:
    """How to compute ``einsum(ta,tb->out)`` as one matmul of (B, M, K) by (B, K, N)."""
    sizes = _letter_sizes((ta, tb), (shape_a, shape_b))
    size_a, size_b = dict(zip(ta, shape_a)), dict(zip(tb, shape_b))
    # letters only one operand has and the output drops: sum them first
    sum_a = tuple(i for i, c in enumerate(ta) if c not in tb and c not in out)
    sum_b = tuple(i for i, c in enumerate(tb) if c not in ta and c not in out)
    ta = "".join(c for c in ta if c in tb or c in out)
    tb = "".join(c for c in tb if c in ta or c in out)
    contract = [c for c in ta if c in tb and c not in out]
    # a contracted letter of size 1 in one operand: sum the other over it (keeping the axis)
    keep_a = tuple(ta.index(c) for c in contract if size_a[c] != 1 and size_b[c] == 1)
    keep_b = tuple(tb.index(c) for c in contract if size_b[c] != 1 and size_a[c] == 1)
    k_sizes = [1 if 1 in (size_a[c], size_b[c]) else sizes[c] for c in contract]
    batch = [c for c in out if c in ta and c in tb]
    free_a = [c for c in out if c in ta and c not in tb]
    free_b = [c for c in out if c in tb and c not in ta]
    b_sizes = [sizes[c] for c in batch]
    a_sizes = [sizes[c] for c in free_a]
    n_sizes = [sizes[c] for c in free_b]
    big_b, m, k, n = (math.prod(s) for s in (b_sizes, a_sizes, k_sizes, n_sizes))
    order = batch + free_a + free_b
    out_perm = tuple(order.index(c) for c in out)
    return (sum_a, sum_b, keep_a, keep_b,
            tuple(ta.index(c) for c in batch + free_a + contract),
            tuple(tb.index(c) for c in batch + contract + free_b),
            tuple(b_sizes + a_sizes + k_sizes), tuple(b_sizes + k_sizes + n_sizes),
            (big_b, m, k), (big_b, k, n), tuple(b_sizes + a_sizes + n_sizes),
            None if out_perm == tuple(range(len(out))) else out_perm)


def _widened(single, fn, /, *arrays, **attrs):
    """Check that the operands share one dtype; run ``fn`` on 16-bit float ones in float32,
    rounding the result back."""
    _check_dtypes(*arrays)
    dtype = arrays[0].dtype
    if dtype in HALF_NUMPY:
        wide = tuple(None if a is None else a.astype(single) for a in arrays)
        return fn(*wide, **attrs).astype(dtype)
    return fn(*arrays, **attrs)


def _dense(xp, a):
    """A broadcast view (zero strides, e.g. the gradient of a sum) copied to contiguous
    memory: BLAS cannot use it, and NumPy's fallback loop is ~500x slower."""
    return xp.ascontiguousarray(a) if 0 in a.strides else a


# matmul and linear check inline rather than through `_widened`: they are the hot path
def matmul(xp, single, a, b):
    """``a @ b`` of one non-bool dtype, float16 and bfloat16 computed in float32."""
    dtype = a.dtype
    if dtype is not b.dtype and dtype != b.dtype or dtype.kind == "b":
        raise TypeError("operands must share one non-bool dtype")
    if 0 in a.strides:  # _dense() inlined: this is the per-op path of every matmul
        a = xp.ascontiguousarray(a)
    if 0 in b.strides:
        b = xp.ascontiguousarray(b)
    if dtype in HALF_NUMPY:
        return xp.matmul(a.astype(single), b.astype(single)).astype(dtype)
    if a.ndim == 2 and b.ndim == 2:
        return a.dot(b)  # same product; ~0.8 us less call overhead than matmul for small ones
    return xp.matmul(a, b)  # a 0-d result is a NumPy scalar: dispatch wraps it


def bmm(xp, a, b):
    """The batched product of (b, n, k) and (b, k, m) operands (dtypes checked by
    :func:`_widened`)."""
    if a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0]:
        raise ValueError("bmm needs (b, n, k) and (b, k, m) operands")
    return xp.matmul(a, b)


def _pair(xp, a, b, ta, tb, out):
    """``einsum(f"{ta},{tb}->{out}", a, b)`` as one (batched) matmul, by :func:`_pair_plan`."""
    (sum_a, sum_b, keep_a, keep_b, perm_a, perm_b, full_a, full_b, shape_a, shape_b,
     result, out_perm) = _pair_plan(ta, tb, out, a.shape, b.shape)
    if sum_a:
        a = a.sum(axis=sum_a, dtype=a.dtype)
    if sum_b:
        b = b.sum(axis=sum_b, dtype=b.dtype)
    if keep_a:
        a = a.sum(axis=keep_a, keepdims=True, dtype=a.dtype)
    if keep_b:
        b = b.sum(axis=keep_b, keepdims=True, dtype=b.dtype)
    a = a.transpose(perm_a)
    b = b.transpose(perm_b)
    if a.shape != full_a:
        a = xp.broadcast_to(a, full_a)
    if b.shape != full_b:
        b = xp.broadcast_to(b, full_b)
    if shape_a[0] == 1:
        r = xp.matmul(_dense(xp, a.reshape(shape_a[1:])), _dense(xp, b.reshape(shape_b[1:])))
    else:
        r = xp.matmul(_dense(xp, a.reshape(shape_a)), _dense(xp, b.reshape(shape_b)))
    r = r.reshape(result)
    return r if out_perm is None else r.transpose(out_perm)


def einsum(xp, *operands, equation):
    """``einsum(equation, *operands)``, the equation as fw_core normalises it (an explicit
    output, no ellipsis), operands broadcasting over a letter of size 1; two operands run as
    one matmul (:func:`_pair`)."""
    lhs, _, out = equation.partition("->")
    terms = tuple(lhs.split(","))
    if len(terms) != len(operands):
        raise ValueError("one subscript term per operand")
    if len(operands) == 2:
        return _pair(xp, operands[0], operands[1], terms[0], terms[1], out)
    sizes = _letter_sizes(terms, tuple(o.shape for o in operands))
    if len(operands) == 1:
        return xp.einsum(equation, operands[0])
    full = [xp.broadcast_to(o, tuple(sizes[c] for c in t)) for o, t in zip(operands, terms)]
    return xp.einsum(equation, *full, optimize=True)


def outer(a, b):
    """The outer product of two 1-d operands."""
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError("outer needs 1-d operands")
    return a[:, None] * b[None, :]


def linear(xp, single, x, weight, bias=None):
    """``x @ weight.T + bias`` over the last dim of ``x``, float16 and bfloat16 computed in
    float32 (the bias added before the one rounding)."""
    dtype = x.dtype
    if dtype is not weight.dtype and dtype != weight.dtype or dtype.kind == "b" or \
            weight.ndim != 2:
        raise TypeError("x and a 2-d weight must share one non-bool dtype")
    if bias is not None and (bias.shape != weight.shape[:1] or bias.dtype != dtype):
        raise ValueError("bias must be (out_features,) of the weight's dtype")
    if dtype in HALF_NUMPY:
        out = linear(xp, single, x.astype(single), weight.astype(single),
                     None if bias is None else bias.astype(single))
        return out.astype(dtype)
    x = _dense(xp, x)
    if x.ndim == 2:
        out = x.dot(weight.T)
    else:
        lead = x.shape[:-1]
        out = xp.matmul(x.reshape(math.prod(lead), x.shape[-1]), weight.T).reshape(
            lead + weight.shape[:1])
    if bias is not None:
        out += bias
    return out


def kernels(xp, special) -> dict:
    """{op name: kernel} for namespace ``xp``."""
    single = xp.dtype(xp.float32)
    return {"matmul": partial(matmul, xp, single),
            "bmm": partial(_widened, single, partial(bmm, xp)),
            "einsum": partial(_widened, single, partial(einsum, xp)), "outer": outer,
            "linear": partial(linear, xp, single)}
