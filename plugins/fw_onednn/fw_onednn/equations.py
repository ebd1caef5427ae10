"""Two-operand einsums that are one (batched) matrix product, as oneDNN matmul layouts.

Autograd's matmul and linear gradients are einsums on the operands as they are
(``"...nm,...km->...nk"``: the output's gradient times ``b`` read transposed; linear's weight
gradient ``"...o,...i->oi"`` contracts every leading dimension), and so are attention's score
and value products written with einsum. Each subscript is one of:

- batch: in both operands and the output;
- row (M): in the first operand and the output only; column (N): in the second and the output;
- contracted (K): in both operands, not in the output.

Such an einsum is ``src (batch, M, K) @ weights (batch, K, N)`` when the output lists its batch
subscripts first and then the rows and the columns (or the columns and the rows: the operands
then swap roles), and each group of subscripts merges into one strided dimension in memory
(its strides form one arithmetic sequence, as in any contiguous array): a view, never a copy.
Anything else — a subscript summed within one operand, a batch subscript after a free one, a
group that does not merge, sizes that differ — is left to fw_cpu, which sums, transposes and
copies as needed.
"""

from __future__ import annotations

from fw_core.ops.linalg import split

from . import layouts
from .primitive import Plan


def _group(letters, term, shape, strides):
    """The dimensions of ``letters`` in one operand merged into ``(size, stride)``, or None."""
    dims = [shape[term.index(c)] for c in letters]
    steps = [strides[term.index(c)] for c in letters]
    return layouts.merge(dims, steps)


def einsum(equation: str, a_shape, a_strides, b_shape, b_strides) -> Plan | str:
    """The :class:`~fw_onednn.primitive.Plan` of fw's normalised two-operand ``equation`` on
    float32 arrays of these shapes and byte strides (``weights_first`` when the second operand
    is oneDNN's src), or why oneDNN cannot take it as one matmul."""
    (ta, tb), out = split(equation)
    a_el, b_el = layouts.elements(a_strides), layouts.elements(b_strides)
    if a_el is None or b_el is None:
        return "a stride is not a whole number of elements"
    if any(c not in tb and c not in out for c in ta) or \
            any(c not in ta and c not in out for c in tb):
        return "a subscript is summed within one operand"
    batch = [c for c in out if c in ta and c in tb]
    rows = [c for c in out if c in ta and c not in tb]
    cols = [c for c in out if c in tb and c not in ta]
    contracted = [c for c in ta if c in tb and c not in out]
    if list(out[:len(batch)]) != batch:
        return "a batch subscript comes after a row or column subscript in the output"
    free = list(out[len(batch):])
    if free not in (rows + cols, cols + rows):
        return "the output interleaves row and column subscripts"
    for c in contracted:
        if a_shape[ta.index(c)] != b_shape[tb.index(c)]:
            return f"contracted subscript {c!r} has sizes {a_shape[ta.index(c)]} and " \
                   f"{b_shape[tb.index(c)]}"
    groups = [_group(rows, ta, a_shape, a_el), _group(contracted, ta, a_shape, a_el),
              _group(contracted, tb, b_shape, b_el), _group(cols, tb, b_shape, b_el)]
    if any(g is None for g in groups):
        return "a group of subscripts does not merge into one strided dimension"
    (m, m_step), (k, ka_step), (_, kb_step), (n, n_step) = groups
    a_dims = [a_shape[ta.index(c)] for c in batch] + [m, k]
    a_steps = [a_el[ta.index(c)] for c in batch] + [m_step, ka_step]
    b_dims = [b_shape[tb.index(c)] for c in batch] + [k, n]
    b_steps = [b_el[tb.index(c)] for c in batch] + [kb_step, n_step]
    swapped = bool(rows or cols) and free != rows + cols
    if swapped:  # out = batch, columns, rows: b^T... as src, a as weights, both transposed
        a_dims, a_steps, b_dims, b_steps = (b_dims[:-2] + [n, k], b_steps[:-2] + [n_step, kb_step],
                                            a_dims[:-2] + [k, m], a_steps[:-2] + [ka_step, m_step])
    plan = layouts.product(a_dims, a_steps, b_dims, b_steps)
    if isinstance(plan, str):
        return plan
    src, weights, dst, _ = plan
    sizes = {c: n for term, shape in ((ta, a_shape), (tb, b_shape))
             for c, n in zip(term, shape) if n != 1}
    return Plan(src, weights, None, dst, tuple(sizes.get(c, 1) for c in out), swapped)
