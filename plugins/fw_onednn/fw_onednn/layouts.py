"""How fw's matmul, bmm and linear operands look to oneDNN's matmul: dims and strides, no copies.

oneDNN's matmul multiplies ``src (..., M, K)`` by ``weights (..., K, N)`` into ``dst (..., M, N)``
where every operand has the same rank and a batch dimension of size 1 broadcasts. Any strides
describe a view, so fw's operands go in as they are: a transposed matrix is the same memory with
its two strides swapped, a 1-d operand a matrix with one dimension of size 1, linear's
``weight.T`` the weight's memory read with swapped strides. The planners only rewrite what
oneDNN would misread, all of it at a miss of the primitive cache, never per call:

- strides of size-1 dimensions, which address nothing, become ones oneDNN's JIT kernels accept
  (NumPy gives 0 to an inserted axis);
- a batch dimension with stride 0 (a broadcast view) becomes size 1, which oneDNN broadcasts;
- leading dimensions of ``src`` fold into M when ``weights`` has no batch and their strides
  allow it (linear on (batch, time, features)): one large GEMM instead of many small ones.

A planner returns a :class:`~fw_onednn.primitive.Plan` (each operand's Layout and the shape of
the result fw expects), or a sentence saying why oneDNN cannot take the call (a stride that is not a
whole number of elements, batch dimensions that do not broadcast, mismatched inner dimensions):
fw_cpu then runs it, and raises fw's error where the shapes are wrong.
"""

from __future__ import annotations

import math

from .primitive import Layout, Plan

ITEMSIZE = 4  # float32, the only dtype the guards accept


def elements(strides: tuple[int, ...]) -> tuple[int, ...] | None:
    """Byte strides in float32 elements, or None when one is not a whole element."""
    if any(s % ITEMSIZE for s in strides):
        return None
    return tuple(s // ITEMSIZE for s in strides)


def _as_matrix(shape, strides, vector_is_row: bool):
    """Dims and element strides with at least 2 dimensions (a 1-d operand as a row or a column
    vector), or None for strides that are not whole elements."""
    counted = elements(strides)
    if counted is None:
        return None
    if len(shape) == 1:
        if vector_is_row:
            return [1, shape[0]], [1, counted[0]]
        return [shape[0], 1], [counted[0], 1]
    return list(shape), list(counted)


def _canonical(dims: list[int], strides: list[int]) -> None:
    """Give size-1 dimensions strides oneDNN's fast kernels accept: 1 in the matrix, the
    operand's extent in a batch dimension."""
    for i in (-1, -2):
        if dims[i] == 1:
            strides[i] = 1
    extent = 1 + sum((d - 1) * s for d, s in zip(dims, strides))
    for i in range(len(dims) - 2):
        if dims[i] == 1:
            strides[i] = extent


def merge(dims, strides) -> tuple[int, int] | None:
    """Dimensions merged into one, ``(size, stride)``, or None when their strides do not form
    one arithmetic sequence (the view is then not one strided dimension); ``(1, 1)`` for none."""
    kept = [(d, s) for d, s in zip(dims, strides) if d != 1]
    for (_, s0), (d1, s1) in zip(kept, kept[1:]):
        if s0 != d1 * s1:
            return None
    size = math.prod(dims)
    return size, (kept[-1][1] if kept and size != 1 else 1)


def _fold_rows(dims: list[int], strides: list[int]):
    """``dims[:-1]`` merged into one row dimension as ([rows, K], [row stride, K stride]), or
    None when they do not merge."""
    rows = merge(dims[:-1], strides[:-1])
    if rows is None:
        return None
    return [rows[0], dims[-1]], [rows[1], strides[-1]]


def contiguous(dims: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major element strides of ``dims``."""
    strides, step = [], 1
    for d in reversed(dims):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def product(a_dims, a_strides, b_dims, b_strides):
    """``(src, weights, dst, batch)`` for ``a @ b`` (each at least 2-d; ``batch`` the broadcast
    batch dimensions of the result), or why not."""
    if a_dims[-1] != b_dims[-2]:
        return f"inner dimensions differ ({a_dims[-1]} vs {b_dims[-2]})"
    ndim = max(len(a_dims), len(b_dims))
    a_dims = [1] * (ndim - len(a_dims)) + a_dims
    a_strides = [0] * (ndim - len(a_strides)) + a_strides
    b_dims = [1] * (ndim - len(b_dims)) + b_dims
    b_strides = [0] * (ndim - len(b_strides)) + b_strides
    batch = []
    for i in range(ndim - 2):
        n = a_dims[i] if b_dims[i] == 1 else b_dims[i]
        for dims, strides in ((a_dims, a_strides), (b_dims, b_strides)):
            if dims[i] != n and dims[i] != 1:
                return f"batch dimensions {a_dims[:-2]} and {b_dims[:-2]} do not broadcast"
            if strides[i] == 0:
                dims[i] = 1  # a broadcast view: oneDNN broadcasts size 1 itself
        batch.append(n)
    dst_batch = batch
    if ndim > 2 and all(d == 1 for d in b_dims[:-2]) and \
            math.prod(a_dims[:-2]) == math.prod(batch):  # a has every batch row in memory
        folded = _fold_rows(a_dims, a_strides)
        if folded is not None:
            a_dims, a_strides = folded
            b_dims, b_strides = b_dims[-2:], b_strides[-2:]
            dst_batch = []
    _canonical(a_dims, a_strides)
    _canonical(b_dims, b_strides)
    dst = (*dst_batch, a_dims[-2], b_dims[-1])
    return (Layout(tuple(a_dims), tuple(a_strides)), Layout(tuple(b_dims), tuple(b_strides)),
            Layout(dst, contiguous(dst)), tuple(batch))


def matmul(a_shape, a_strides, b_shape, b_strides) -> Plan | str:
    """The :class:`~fw_onednn.primitive.Plan` of fw's ``matmul(a, b)`` on float32 arrays of these
    shapes and byte strides, or why oneDNN cannot take it. 1-d operands follow fw's rules: a
    row vector on the left, a column vector on the right, removed from the result."""
    a = _as_matrix(a_shape, a_strides, vector_is_row=True)
    b = _as_matrix(b_shape, b_strides, vector_is_row=False)
    if a is None or b is None:
        return "a stride is not a whole number of elements"
    layouts = product(*a, *b)
    if isinstance(layouts, str):
        return layouts
    src, weights, dst, batch = layouts
    rows = (a_shape[-2],) if len(a_shape) > 1 else ()
    cols = (b_shape[-1],) if len(b_shape) > 1 else ()
    return Plan(src, weights, None, dst, (*batch, *rows, *cols))


def linear(x_shape, x_strides, w_shape, w_strides, bias_shape, bias_strides) -> Plan | str:
    """The Plan of fw's ``linear(x, weight, bias)``: ``x @
    weight.T (+ bias)``, the weight read transposed in place; ``bias_shape`` and
    ``bias_strides`` are None without a bias. Or why oneDNN cannot take it."""
    if len(w_shape) != 2 or not x_shape:
        return "linear needs a 2-d weight and an x with at least 1 dimension"
    if bias_shape is not None and tuple(bias_shape) != (w_shape[0],):
        return f"the bias is {tuple(bias_shape)}, not ({w_shape[0]},)"
    x = _as_matrix(x_shape, x_strides, vector_is_row=True)
    w = elements(w_strides)
    if x is None or w is None:
        return "a stride is not a whole number of elements"
    layouts = product(*x, [w_shape[1], w_shape[0]], [w[1], w[0]])
    if isinstance(layouts, str):
        return layouts
    src, weights, dst, _ = layouts
    bias = None
    if bias_strides is not None:
        if w_shape[0] > 1 and bias_strides[0] != ITEMSIZE:
            # oneDNN 3.2's matmul reads the bias as contiguous whatever its descriptor says
            return "the bias is strided; oneDNN's matmul reads it as contiguous"
        dims = (1,) * (len(dst.dims) - 1) + (w_shape[0],)
        bias = Layout(dims, contiguous(dims))
    return Plan(src, weights, bias, dst, (*x_shape[:-1], w_shape[0]))
