"""Linear algebra ops: sums of products (contractions) — matmul, bmm, einsum, outer, linear.

Every gradient here is again a contraction written with these ops: matmul's, bmm's and linear's
VJPs are einsums, and an einsum's VJP is an einsum with the equation rearranged, so each of
them differentiates twice (and more). Operands must share one dtype, as in PyTorch (outer
promotes, as PyTorch's does); bool is refused (there is no sum of products over bools).

Einsum equations are normalised once, at the boundary, to an explicit form without ellipsis
(``"...ij,...jk->...ik"`` on 3-d operands becomes ``"Aij,Ajk->Aik"``): that is the ``equation``
attribute kernels, meta rules and VJPs read.
"""

from __future__ import annotations

__all__ = ["bmm", "einsum", "linear", "matmul", "outer"]

from functools import lru_cache
from string import ascii_letters

from ..dtypes import promote_types
from ..errors import DTypeError, ShapeError
from ..records import Structure, SumBatching, TensorSpec
from ..tensor import Tensor
from . import anchors
from ._elementwise_support import _reflected
from .broadcast import sum_to
from .creation import eye, ones
from .dispatch import apply, check_tensors
from .elementwise import mul
from .meta import broadcast_shapes, located, promote
from .registry import define_op

_BILINEAR = anchors.smooth("bilinear: the gradient w.r.t. one operand is the other operand "
                           "contracted with the output's gradient, so it scales with the other "
                           "operand's magnitude")


# -- meta rules -----------------------------------------------------------------------------------
def _common_dtype(op: str, *specs):
    """The one dtype all operands share, or a DTypeError (no promotion, as in PyTorch)."""
    dtype = specs[0].dtype
    for s in specs[1:]:
        if s.dtype is not dtype:
            raise DTypeError(
                f"operands have different dtypes ({', '.join(s.dtype.name for s in specs)})",
                op=op, hint=f"convert one first, e.g. b.to(a.dtype) (here .to(fw.{dtype.name}))")
    if dtype.name == "bool":
        raise DTypeError("bool operands have no sum of products", op=op,
                         hint="convert first, e.g. a.float() or a.long()")
    return dtype


def _shape_text(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _mismatch(op, a, b, inner_a, inner_b) -> ShapeError:
    return ShapeError(
        f"cannot multiply shapes {_shape_text(a)} and {_shape_text(b)}: the inner dimensions "
        f"differ ({inner_a} vs {inner_b})", op=op,
        hint="the last dimension of a must equal the second-to-last of b (the only one of a 1-d "
             "b); transpose or reshape one operand, e.g. a @ b.transpose(-1, -2)")


def _matmul_meta(a, b):
    dtype = _common_dtype("matmul", a, b)
    sa, sb = tuple(a.shape), tuple(b.shape)
    if not sa or not sb:
        raise ShapeError(f"both operands need at least 1 dimension, got shapes {_shape_text(sa)} "
                         f"and {_shape_text(sb)}", op="matmul",
                         hint="use fw.mul (or *) to scale by a 0-d tensor")
    inner_b = sb[0] if len(sb) == 1 else sb[-2]
    if sa[-1] != inner_b:
        raise _mismatch("matmul", sa, sb, sa[-1], inner_b)
    rows = sa[-2:-1]  # () for a 1-d a: its dimension is contracted away
    cols = sb[-1:] if len(sb) > 1 else ()
    try:
        batch = broadcast_shapes(sa[:-2], sb[:-2], op="matmul")
    except ShapeError as err:
        err.message = (f"the batch dimensions of shapes {_shape_text(sa)} and {_shape_text(sb)} "
                       f"do not broadcast ({err.message})")
        raise
    return TensorSpec(batch + rows + cols, dtype)


def _bmm_meta(a, b):
    dtype = _common_dtype("bmm", a, b)
    sa, sb = tuple(a.shape), tuple(b.shape)
    if len(sa) != 3 or len(sb) != 3:
        raise ShapeError(f"expects two 3-d tensors (batch, n, m), got shapes {_shape_text(sa)} "
                         f"and {_shape_text(sb)}", op="bmm",
                         hint="use fw.matmul for 2-d operands or broadcast batch dimensions")
    if sa[0] != sb[0]:
        raise ShapeError(f"batch sizes differ: {sa[0]} vs {sb[0]} (shapes {_shape_text(sa)} and "
                         f"{_shape_text(sb)})", op="bmm",
                         hint="bmm does not broadcast; use fw.matmul, which does")
    if sa[2] != sb[1]:
        raise _mismatch("bmm", sa, sb, sa[2], sb[1])
    return TensorSpec((sa[0], sa[1], sb[2]), dtype)


def _outer_meta(a, b):
    if len(a.shape) != 1 or len(b.shape) != 1:
        raise ShapeError(f"expects two 1-d tensors, got shapes {_shape_text(a.shape)} and "
                         f"{_shape_text(b.shape)}", op="outer",
                         hint="flatten them first, or use fw.einsum for other layouts")
    return TensorSpec((a.shape[0], b.shape[0]), promote(a, b))


def _linear_meta(x, weight, bias=None):
    dtype = _common_dtype("linear", *(s for s in (x, weight, bias) if s is not None))
    sx, sw = tuple(x.shape), tuple(weight.shape)
    if len(sw) != 2:
        raise ShapeError(f"weight must be 2-d (out_features, in_features), got shape "
                         f"{_shape_text(sw)}", op="linear",
                         hint="for a 1-d weight use fw.matmul(x, w) (+ bias)")
    if not sx:
        raise ShapeError("x must have at least 1 dimension (..., in_features), got a 0-d tensor",
                         op="linear", hint="use x.reshape(1) for a single feature")
    if sx[-1] != sw[1]:
        raise ShapeError(
            f"x has {sx[-1]} features (last dimension of {_shape_text(sx)}) but the weight "
            f"{_shape_text(sw)} expects in_features = {sw[1]}", op="linear",
            hint="the weight is (out_features, in_features); check the layer's in_features or "
                 "transpose the weight")
    if bias is not None and tuple(bias.shape) != (sw[0],):
        raise ShapeError(f"bias must have shape ({sw[0]},) (out_features), got "
                         f"{_shape_text(bias.shape)}", op="linear",
                         hint="pass a 1-d bias with one value per output feature")
    return TensorSpec(sx[:-1] + (sw[0],), dtype)


# -- einsum equations -----------------------------------------------------------------------------
def _equation_error(equation, message, hint="write it like 'bij,bjk->bik': letters per "
                    "operand, ',' between operands, '...' for broadcast dimensions"):
    return ShapeError(f"equation {equation!r}: {message}", op="einsum", hint=hint)


@lru_cache(maxsize=1024)
def _normalize(equation: str, ndims: tuple[int, ...]) -> str:
    """The explicit, ellipsis-free form of ``equation`` for operands of ``ndims`` dimensions."""
    text = equation.replace(" ", "")
    lhs, arrow, rhs = text.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise _equation_error(equation, f"{len(terms)} operand term(s) for {len(ndims)} operand(s)",
                              hint="give one subscript term per operand, separated by ','")
    used = set(lhs + rhs) - set(",.")
    bad = sorted(used - set(ascii_letters))
    if bad:
        raise _equation_error(equation, f"invalid subscript(s) {bad}")
    spare = [c for c in ascii_letters if c not in used]
    widths = []
    for term, ndim in zip(terms, ndims):
        letters = term.replace("...", "")
        if "." in letters or term.count("...") > 1:
            raise _equation_error(equation, f"term {term!r} has a stray '.' or two ellipses")
        if len(letters) > ndim or ("..." not in term and len(letters) != ndim):
            raise _equation_error(equation, f"term {term!r} does not fit an operand with {ndim} "
                                  "dimension(s)", hint="give one letter per dimension, or '...' "
                                  "for the leading ones")
        widths.append(ndim - len(letters) if "..." in term else 0)
    width = max(widths, default=0)
    if width > len(spare):
        raise _equation_error(equation, "too many dimensions for the letters left")
    ellipsis = "".join(spare[:width])
    inputs = [term.replace("...", ellipsis[width - w:]) for term, w in zip(terms, widths)]
    if arrow:
        if rhs.count("...") > 1 or "." in rhs.replace("...", ""):
            raise _equation_error(equation, f"output {rhs!r} has a stray '.' or two ellipses")
        if "..." in rhs and not any("..." in t for t in terms):
            raise _equation_error(equation, "the output has '...' but no operand does")
        output = rhs.replace("...", ellipsis)
        for c in output:
            if output.count(c) > 1:
                raise _equation_error(equation, f"output subscript {c!r} appears twice")
            if not any(c in t for t in inputs):
                raise _equation_error(equation, f"output subscript {c!r} is in no operand")
    else:  # implicit: broadcast dimensions, then the letters used once, in alphabetical order
        counts = "".join(t.replace("...", "") for t in terms)
        output = ellipsis + "".join(sorted(c for c in set(counts) if counts.count(c) == 1))
    return ",".join(inputs) + "->" + output


@lru_cache(maxsize=1024)
def split(equation: str) -> tuple[tuple[str, ...], str]:
    """``("ij,jk->ik")`` -> ``(("ij", "jk"), "ik")`` for a normalised equation."""
    lhs, _, rhs = equation.partition("->")
    return tuple(lhs.split(",")), rhs


def letter_sizes(terms, shapes, op="einsum") -> dict[str, int]:
    """Each subscript's size across operands (size 1 broadcasts), or a ShapeError."""
    sizes: dict[str, int] = {}
    where: dict[str, int] = {}
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        for c, n in zip(term, shape):
            m = sizes.get(c)
            if m is None or m == 1:
                sizes[c], where[c] = n, i
            elif n not in (1, m):
                raise ShapeError(
                    f"subscript {c!r} has size {m} in operand {where[c]} "
                    f"{_shape_text(shapes[where[c]])} but {n} in operand {i} "
                    f"{_shape_text(shape)}", op=op,
                    hint="dimensions with the same subscript must have the same size (or 1)")
    return sizes


def _einsum_meta(*operands, equation):
    dtype = _common_dtype("einsum", *operands)
    terms, output = split(equation)
    shapes = [tuple(o.shape) for o in operands]
    if len(terms) != len(shapes) or any(len(t) != len(s) for t, s in zip(terms, shapes)):
        raise ShapeError(f"equation {equation!r} does not fit operands of shapes "
                         f"{', '.join(map(_shape_text, shapes))}", op="einsum",
                         hint="give one letter per dimension of each operand")
    sizes = letter_sizes(terms, shapes)
    return TensorSpec(tuple(sizes[c] for c in output), dtype)


# -- VJPs -----------------------------------------------------------------------------------------
def _einsum_vjp(ctx, g):
    """Operand i's gradient: the einsum of the other operands and ``g`` back to operand i's
    subscripts. A subscript nothing else supplies at operand i's size (it was summed away, or
    broadcast from size 1) comes from a tensor of ones; sizes broadcast up are summed back."""
    terms, output = split(ctx.attrs["equation"])
    operands = ctx.inputs
    grads = []
    for i, (term, shape) in enumerate(zip(terms, ctx.input_shapes)):
        if ctx.next[i] is None:
            grads.append(None)
            continue
        others = [t for j, t in enumerate(terms) if j != i] + [output]
        tensors = [o for j, o in enumerate(operands) if j != i] + [g]
        # a repeated subscript (a diagonal) gets a fresh letter, tied to the first by an identity
        term, ties = _distinct(term, shape, ctx.attrs["equation"])
        for pair, n in ties:
            others.append(pair)
            tensors.append(eye(n, dtype=g.dtype, device=g.device))
        have = letter_sizes(others, [t.shape for t in tensors])
        missing = [(c, n) for c, n in zip(term, shape)
                   if c not in have or (have[c] == 1 and n != 1)]
        if missing:
            others.append("".join(c for c, _ in missing))
            tensors.append(ones(*(n for _, n in missing), dtype=g.dtype, device=g.device))
        grad = apply(EINSUM, tuple(tensors), {"equation": ",".join(others) + "->" + term})
        grads.append(sum_to(grad, shape))
    return tuple(grads)


def _distinct(term: str, shape, equation: str):
    """``term`` with each repeated subscript's later occurrences renamed to letters unused in
    ``equation``, and the ``(first + renamed, size)`` pairs an identity ties together:
    ``"iij"`` -> ``("iaj", [("ia", n)])``."""
    if len(set(term)) == len(term):
        return term, []
    spare = iter(c for c in ascii_letters if c not in equation)
    letters, ties = [], []
    for c, n in zip(term, shape):
        if c in letters:
            fresh = next(spare)
            ties.append((c + fresh, n))
            c = fresh
        letters.append(c)
    return "".join(letters), ties


def _take_diagonals(operands, equation: str):
    """Operands whose terms repeat a subscript replaced by those diagonals (one-operand einsums,
    whose gradient the identity ties give), and the equation on the reduced terms: kernels of
    several operands then see each subscript once per operand."""
    terms, output = split(equation)
    reduced, new_terms = [], []
    for operand, term in zip(operands, terms):
        distinct = "".join(dict.fromkeys(term))
        if distinct != term:
            operand = apply(EINSUM, (operand,), {"equation": f"{term}->{distinct}"})
        reduced.append(operand)
        new_terms.append(distinct)
    return tuple(reduced), ",".join(new_terms) + "->" + output


def _check_diagonal_sizes(operands, equation: str) -> None:
    """A subscript repeated within one operand must have one size there (no broadcasting)."""
    for k, (operand, term) in enumerate(zip(operands, split(equation)[0])):
        seen: dict[str, int] = {}
        for c, n in zip(term, operand.shape):
            if seen.setdefault(c, n) != n:
                raise ShapeError(
                    f"subscript {c!r} is repeated for operand {k} but the sizes don't match, "
                    f"{seen[c]} != {n}", op="einsum",
                    hint="a repeated subscript takes a diagonal: those dimensions must have the "
                    "same size")


#: matmul's gradients by operand rank (1, or 2 for 2 and more): (equation for a, for b); the
#: results keep any broadcast batch dimensions, which sum_to then sums back
_MATMUL_GRADS = {
    (1, 2): ("...m,...km->k", "k,...m->...km"),
    (2, 1): ("...n,k->...nk", "...nk,...n->k"),
    (2, 2): ("...nm,...km->...nk", "...nk,...nm->...km"),
}


def _matmul_vjp(ctx, g):
    a, b = ctx.inputs
    ga = gb = None
    if a._data.ndim == 1 and b._data.ndim == 1:  # a dot product: g is 0-d
        return (mul(g, b) if ctx.next[0] is not None else None,
                mul(g, a) if ctx.next[1] is not None else None)
    eq_a, eq_b = _MATMUL_GRADS[min(a._data.ndim, 2), min(b._data.ndim, 2)]
    if ctx.next[0] is not None:
        ga = sum_to(einsum(eq_a, g, b), ctx.input_shapes[0])
    if ctx.next[1] is not None:
        gb = sum_to(einsum(eq_b, a, g), ctx.input_shapes[1])
    return ga, gb


def _bmm_vjp(ctx, g):
    a, b = ctx.inputs
    return (einsum("bnm,bkm->bnk", g, b) if ctx.next[0] is not None else None,
            einsum("bnk,bnm->bkm", a, g) if ctx.next[1] is not None else None)


def _outer_vjp(ctx, g):
    a, b = ctx.inputs
    return (matmul(g, b) if ctx.next[0] is not None else None,
            matmul(a, g) if ctx.next[1] is not None else None)


def _linear_vjp(ctx, g):
    x, weight = ctx.inputs[:2]
    grads = [matmul(g, weight) if ctx.next[0] is not None else None,
             einsum("...o,...i->oi", g, x) if ctx.next[1] is not None else None]
    if len(ctx.inputs) == 3:
        grads.append(sum_to(g, ctx.input_shapes[2]) if ctx.next[2] is not None else None)
    return tuple(grads)


# -- the contracts --------------------------------------------------------------------------------
def _contraction(name, doc, signature, meta, vjp, batched_sum=None):
    return define_op(name, family="linalg", builtin=True, doc=doc, signature=signature, meta=meta,
                     vjp=vjp, structure=Structure.CONTRACTION, anchor=_BILINEAR,
                     saves=("inputs",), batched_sum=batched_sum)


def _einsum_batched_sum(attrs: list[dict], shapes: list[tuple]) -> SumBatching | None:
    """Two-operand products with one equation: their sum is the product of the operands
    concatenated along a contracted letter (``sum_i g_i^T x_i = cat(g)^T cat(x)``)."""
    equation = attrs[0]["equation"]
    if any(a != attrs[0] for a in attrs) or len(shapes[0]) != 2:
        return None
    lhs, _, out = equation.partition("->")
    ta, tb = lhs.split(",")
    contracted = [c for c in ta if c in tb and c not in out]
    if not contracted:
        return None
    return SumBatching(axes=(ta.index(contracted[0]), tb.index(contracted[0])),
                       order=tuple(range(len(attrs))))


MATMUL = _contraction(
    "matmul", "Matrix product with PyTorch's rules: 1-d·1-d is a dot product, a 1-d operand is "
    "a row (left) or column (right) vector that is removed again, and leading batch dimensions "
    "broadcast.", "matmul(a: Tensor, b: Tensor) -> Tensor", _matmul_meta, _matmul_vjp)
BMM = _contraction(
    "bmm", "Batched matrix product of (b, n, k) and (b, k, m) tensors; no broadcasting.",
    "bmm(a: Tensor, b: Tensor) -> Tensor", _bmm_meta, _bmm_vjp)
EINSUM = _contraction(
    "einsum", "Sum of products over the subscripts an Einstein equation leaves out of its output.",
    "einsum(*operands: Tensor, equation: str) -> Tensor", _einsum_meta, _einsum_vjp,
    _einsum_batched_sum)
OUTER = _contraction(
    "outer", "Outer product of two vectors: out[i, j] = a[i] * b[j].",
    "outer(a: Tensor, b: Tensor) -> Tensor", _outer_meta, _outer_vjp)
LINEAR = _contraction(
    "linear", "x @ weight^T + bias, in one kernel: the affine map of a fully connected layer.",
    "linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor", _linear_meta,
    _linear_vjp)


# -- the public functions -------------------------------------------------------------------------
def matmul(a: Tensor, b: Tensor) -> Tensor:
    """Matrix product ``a @ b`` with PyTorch's rules.

    - both 1-d (n,): the dot product, a 0-d tensor;
    - (n, k) @ (k, m) -> (n, m); a 1-d ``a`` acts as (1, k), a 1-d ``b`` as (k, 1), and that
      dimension is removed from the result;
    - more dimensions are batches, which broadcast: (2, 1, n, k) @ (3, k, m) -> (2, 3, n, m).

    Operands must share one dtype. Raises ShapeError naming both shapes when the inner
    dimensions differ. ``fw.ones(2, 3) @ fw.ones(3)`` is ``tensor([3., 3.])``.
    """
    if a.__class__ is not Tensor or b.__class__ is not Tensor:
        check_tensors(MATMUL, a, b)
    return apply(MATMUL, (a, b))


def bmm(a: Tensor, b: Tensor) -> Tensor:
    """Batched matrix product: (b, n, k) @ (b, k, m) -> (b, n, m), without broadcasting."""
    check_tensors(BMM, a, b)
    return apply(BMM, (a, b))


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation: ``fw.einsum("bhqd,bhkd->bhqk", q, k)``.

    Each operand gets one letter per dimension; letters shared by operands are multiplied
    elementwise, letters missing from the output (after ``->``) are summed. ``...`` stands for
    leading dimensions, which broadcast; without ``->`` the output is the ellipsis dimensions
    and then the letters used once, in alphabetical order. Operands may also be given as one
    list. Dimensions with the same letter must have the same size (or 1, which broadcasts).
    A letter repeated within one operand takes that diagonal: ``"ii->i"`` is the diagonal,
    ``"ii"`` the trace, ``"iij->j"`` the traces of each ``[:, :, j]`` slice.
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ShapeError("einsum needs at least one operand", op="einsum",
                         hint="e.g. fw.einsum('ij->ji', x)")
    check_tensors(EINSUM, *operands)
    try:
        normal = _normalize(equation, tuple(o._data.ndim for o in operands))
        if any(len(set(t)) != len(t) for t in split(normal)[0]):
            _check_diagonal_sizes(operands, normal)
            if len(operands) > 1:
                operands, normal = _take_diagonals(operands, normal)
    except ShapeError as err:
        raise located(err, "einsum", operands) from None
    return apply(EINSUM, operands, {"equation": normal})


def outer(a: Tensor, b: Tensor) -> Tensor:
    """Outer product of two 1-d tensors: (n,) and (m,) -> (n, m). Dtypes promote."""
    check_tensors(OUTER, a, b)
    if a._data.dtype != b._data.dtype:
        common = promote_types(a.dtype, b.dtype)
        a, b = a.to(common), b.to(common)
    return apply(OUTER, (a, b))


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ weight.T + bias`` as one op (one fused kernel): the fully connected layer.

    Args:
        x: (..., in_features).
        weight: (out_features, in_features).
        bias: (out_features,) or None.

    Returns (..., out_features). Raises ShapeError when in_features do not match.
    """
    if bias is None:
        if x.__class__ is not Tensor or weight.__class__ is not Tensor:
            check_tensors(LINEAR, x, weight)
        return apply(LINEAR, (x, weight))
    if x.__class__ is not Tensor or weight.__class__ is not Tensor or bias.__class__ is not Tensor:
        check_tensors(LINEAR, x, weight, bias)
    return apply(LINEAR, (x, weight, bias))


#: Tensor methods and operators this family provides (bound by fw_core.tensor_methods)
METHODS = {
    "matmul": matmul, "__matmul__": matmul, "__rmatmul__": _reflected(matmul),
    "bmm": bmm, "outer": outer,
}
