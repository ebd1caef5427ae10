"""Neural-network ops: the softmax family, dropout and embedding.

Each op's forward is one fused kernel (see ``fw_cpu/kernels/nn.py``); each VJP is written with fw
ops, so it runs on every device and can be differentiated again.

Jacobian structures: softmax and log_softmax are REDUCTION ops. Each output
combines every input of its slice (the softmax dim), so
the Jacobian is block-diagonal with one dense block per slice: a reduction over those axes
followed by a broadcast back. That is what fusion must know (the slice has to be reduced before
any output is ready), and it is more than OPAQUE says. Dropout is ELEMENTWISE (for a fixed mask)
and embedding INJECTIVE (each output element is one weight element, moved).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["dropout", "embedding", "log_softmax", "softmax"]


import numpy as np

from .. import dtypes as _dt
from ..errors import (
    DTypeError,
    FwError,
    IndexOutOfRangeError,
    ShapeError,
)
from ..records import Structure, TensorSpec
from . import anchors, reduction
from .creation import _host_drawn, as_tensor
from .dispatch import apply, explain_failure
from .elementwise import exp, where
from .meta import argument_error, describe, located, normalize_dim, require_floating
from .registry import define_op

if TYPE_CHECKING:
    from ..tensor import Tensor


def meta_error(op, inputs, attrs) -> FwError:
    """The meta rule's error for inputs a public function rejects before running its kernel."""
    return explain_failure(op, inputs, attrs, TypeError("rejected before the kernel ran"))


# -- softmax family -------------------------------------------------------------------------------
def _softmax_grad(out, g, dim):
    """The VJP of ``out = softmax(x, dim)``: out * (g - sum(g * out, dim))."""
    return out * (g - reduction.sum(g * out, dim=dim, keepdim=True))


def _softmax_meta(x, dim):
    require_floating(x, "softmax")
    normalize_dim(dim, len(x.shape), "softmax")
    return TensorSpec(tuple(x.shape), x.dtype)


def _softmax_vjp(ctx, g):
    out = ctx.out
    if out.ndim == 0:
        return (g * 0.0,)
    return (_softmax_grad(out, g, ctx.attrs["dim"]),)


def _log_softmax_vjp(ctx, g):
    if g.ndim == 0:
        return (g * 0.0,)
    return (g - exp(ctx.out) * reduction.sum(g, dim=ctx.attrs["dim"], keepdim=True),)


_DOMINANT = ("a dominant logit saturates softmax: gradients to the others vanish (scale the "
             "logits down, i.e. raise the temperature, or look for exploding logits)")

SOFTMAX = define_op(
    "softmax", family="nn", builtin=True,
    doc="exp(x) / sum(exp(x)) along ``dim``, computed stably (the max is subtracted first).",
    signature="softmax(x: Tensor, dim: int) -> Tensor",
    meta=_softmax_meta, vjp=_softmax_vjp, structure=Structure.REDUCTION,
    anchor=anchors.temperature(_DOMINANT), saves=("out",))

SAFE_SOFTMAX = define_op(
    "safe_softmax", family="nn", builtin=True,
    doc="softmax along ``dim``, except that a slice whose entries are all -inf gives zeros "
        "instead of NaN (fully masked attention rows).",
    signature="safe_softmax(x: Tensor, dim: int) -> Tensor",
    meta=_softmax_meta, vjp=_softmax_vjp, structure=Structure.REDUCTION,
    anchor=anchors.temperature(_DOMINANT), saves=("out",))

LOG_SOFTMAX = define_op(
    "log_softmax", family="nn", builtin=True,
    doc="x - logsumexp(x) along ``dim``: the log of softmax, computed stably.",
    signature="log_softmax(x: Tensor, dim: int) -> Tensor",
    meta=_softmax_meta, vjp=_log_softmax_vjp, structure=Structure.REDUCTION,
    anchor=anchors.smooth("stable: prefer it to log(softmax(x)), which underflows to log(0) = "
                          "-inf for very negative logits"),
    saves=("out",))


def _softmax_call(op, x, dim, dtype):
    try:
        if dtype is not None:
            x = x.to(dtype)
        attrs = {"dim": normalize_dim(dim, x._data.ndim, op.name)}
        if not _dt.is_float(x._data.dtype):
            raise meta_error(op, (x,), attrs)
        return apply(op, (x,), attrs)
    except FwError as err:
        raise located(err, op.name, (x,), dim=dim) from None


def softmax(x, dim: int, dtype=None) -> Tensor:
    """``exp(x) / exp(x).sum(dim)``: probabilities along ``dim`` (stable for large logits).

    Args:
        x: floating-point logits of any shape.
        dim: the dimension that sums to 1 (negative counts from the end).
        dtype: convert ``x`` to this dtype first (e.g. ``fw.float32`` for half inputs).

    >>> fw.softmax(fw.tensor([1.0, 2.0, 3.0]), dim=0)
    tensor([0.09  , 0.2447, 0.6652])
    """
    return _softmax_call(SOFTMAX, x, dim, dtype)


def log_softmax(x, dim: int, dtype=None) -> Tensor:
    """``x - logsumexp(x, dim)``: log-probabilities along ``dim``; use it, not log(softmax(x)).

    >>> fw.log_softmax(fw.tensor([0.0, 0.0]), dim=0)
    tensor([-0.6931, -0.6931])
    """
    return _softmax_call(LOG_SOFTMAX, x, dim, dtype)


def safe_softmax(x, dim: int):
    """softmax, but rows that are entirely -inf give 0 (and a 0 gradient) instead of NaN."""
    return _softmax_call(SAFE_SOFTMAX, x, dim, None)


# -- dropout --------------------------------------------------------------------------------------
def _dropout_meta(x, mask, p):
    require_floating(x, "dropout")
    if tuple(mask.shape) != tuple(x.shape) or mask.dtype is not _dt.bool_:
        raise ShapeError(f"mask {mask} does not match input {x}", op="dropout",
                         hint="the mask is a bool tensor of the input's shape")
    return TensorSpec(tuple(x.shape), x.dtype)


DROPOUT = define_op(
    "dropout", family="nn", builtin=True,
    doc="x * mask / (1 - p): kept elements scaled up so the expectation is unchanged, dropped "
        "ones 0 (all 0 when p = 1).",
    signature="dropout(x: Tensor, mask: Tensor[bool], p: float) -> Tensor",
    meta=_dropout_meta,
    # the VJP of dropout is dropout with the same mask
    vjp=lambda ctx, g: (apply(DROPOUT, (g, ctx.inputs[1]), ctx.attrs), None),
    structure=Structure.ELEMENTWISE,
    anchor=anchors.smooth("linear for a fixed mask: dropped units get exactly 0 gradient this "
                          "step, kept ones 1/(1-p)"),
    saves=("inputs",), cost="cheap")


def dropout(x, p: float = 0.5, training: bool = True, generator=None):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    The mask is drawn from ``generator`` (default: ``fw.random.default_generator``), so the same
    seed gives the same mask on every device. Returns ``x`` itself when ``p == 0`` or not
    ``training``; all zeros when ``p == 1``.

    >>> g = fw.Generator(0)
    >>> fw.dropout(fw.ones(4), 0.5, generator=g).tolist()
    [2.0, 2.0, 2.0, 0.0]
    """
    try:
        if not 0.0 <= p <= 1.0:
            raise argument_error("dropout", f"dropout probability has to be between 0 and 1, got "
                                 f"{p}", "pass p in [0, 1] (the fraction of elements to zero)",
                                 values=(x,), p=p)
        if not training or p == 0.0:
            return x
        return apply(DROPOUT, (x, _keep_mask(x._data.shape, p, x._device, generator)),
                     {"p": float(p)})
    except FwError as err:
        raise located(err, "dropout", (x,), p=p, training=training, generator=generator) from None


def _keep_mask(shape_, p, device, generator=None):
    """A bool tensor on ``device``, each element True with probability 1 - p.

    Drawn on the host (float32 uniforms from the generator's PCG64 stream), so one seed gives
    one mask on every device.
    """
    if p >= 1.0:
        return as_tensor(np.zeros(shape_, dtype=bool), device=device)
    if generator is None:
        from ..random import default_generator as generator

    def draw():
        keep = np.asarray(generator.numpy.random(shape_, dtype=np.float32) >= p)
        return device.spec.from_numpy(keep, device.index)

    return _host_drawn(draw, device, what="a dropout mask")


# -- embedding ------------------------------------------------------------------------------------
def _index_meta(op, indices):
    if indices.dtype.category != _dt.INTEGER:
        raise DTypeError(f"expects integer indices, got {indices.dtype.name}", op=op,
                         hint="convert them with .long()")


def _embedding_meta(indices, weight, padding_idx):
    _index_meta("embedding", indices)
    if len(weight.shape) != 2:
        raise ShapeError(f"expects a 2-d weight (num_embeddings, dim), got shape "
                         f"{tuple(weight.shape)}", op="embedding",
                         hint="the weight holds one row per vocabulary entry")
    return TensorSpec(tuple(indices.shape) + (weight.shape[1],), weight.dtype)


def _embedding_vjp(ctx, g):
    indices, weight = ctx.inputs
    if ctx.next[1] is None:
        return (None, None)
    return (None, apply(EMBEDDING_BACKWARD, (g, indices),
                        {"num_weights": weight.shape[0], "padding_idx": ctx.attrs["padding_idx"]}))


EMBEDDING = define_op(
    "embedding", family="nn", builtin=True,
    doc="weight[indices]: one row of ``weight`` per index (a table lookup).",
    signature="embedding(indices: Tensor[int, *], weight: Tensor[V, D], padding_idx: int | None"
              ") -> Tensor[*, D]",
    meta=_embedding_meta, vjp=_embedding_vjp, structure=Structure.INJECTIVE,
    anchor=anchors.smooth("linear in the weight: only the rows that were looked up get a "
                          "gradient (the padding row never does)"),
    saves=("inputs",))


def _embedding_backward_meta(g, indices, num_weights, padding_idx):
    _index_meta("embedding_backward", indices)
    if tuple(g.shape[:-1]) != tuple(indices.shape):
        raise ShapeError(f"gradient {g} does not match indices {indices}",
                         op="embedding_backward", hint="g must have shape indices.shape + (D,)")
    return TensorSpec((num_weights, g.shape[-1]), g.dtype)


def _embedding_backward_vjp(ctx, gg):
    indices = ctx.inputs[1]
    pad = ctx.attrs["padding_idx"]
    if pad is not None:
        rows = np.arange(ctx.attrs["num_weights"]).reshape(-1, 1) == pad
        gg = where(as_tensor(rows, device=gg._device), 0.0, gg)
    return (apply(EMBEDDING, (indices, gg), {"padding_idx": pad}), None)


EMBEDDING_BACKWARD = define_op(
    "embedding_backward", family="nn", builtin=True,
    doc="The weight gradient of embedding: the rows of g scatter-added at their indices into "
        "a (num_weights, D) zero matrix; the padding_idx row stays 0.",
    signature="embedding_backward(g: Tensor[*, D], indices: Tensor[int, *], num_weights: int, "
              "padding_idx: int | None) -> Tensor[num_weights, D]",
    meta=_embedding_backward_meta, vjp=_embedding_backward_vjp, structure=Structure.INJECTIVE,
    anchor=anchors.smooth("linear: a sum of rows"), saves=("inputs",))


def check_indices(op: str, inputs: tuple, indices, size: int, what: str, unit: str, hint: str,
                  ignore=None) -> None:
    """Raise an IndexOutOfRangeError naming the first of ``indices`` outside [0, size)
    (``ignore`` is allowed too); ``inputs`` are the op's tensors, for the error's description.

    One min/max pass over the indices on the common path; this turns a bad label into an
    explanation instead of a wrong gather (negative indices would silently wrap around).
    """
    data = indices._data
    if data.size == 0:
        return
    if 0 <= int(data.min()) and int(data.max()) < size:
        return
    bad = (data < 0) | (data >= size)
    if ignore is not None:
        bad &= data != ignore
    if not bool(bad.any()):
        return
    first = int(data[bad].reshape(-1)[0])
    allowed = f"[0, {size - 1}]" if size else "nothing (the size is 0)"
    if ignore is not None:
        allowed += f" or ignore_index={ignore}"
    raise IndexOutOfRangeError(f"{what} {first} is out of range: there are {size} {unit}, so "
                               f"valid values are {allowed}", op=op, inputs=describe(inputs),
                               hint=hint)


def embedding(indices, weight, padding_idx: int | None = None):
    """Rows of ``weight`` (num_embeddings, dim) by index: the result is indices.shape + (dim,).

    ``padding_idx`` names a row that never receives a gradient (its value is returned as is).
    A negative ``padding_idx`` counts from the end.

    Raises:
        FwError: an index outside [0, num_embeddings), naming the index and the vocabulary size.
        DTypeError: non-integer indices.
    """
    try:
        attrs = {"padding_idx": padding_idx}
        if indices._data.dtype.kind not in "iu" or weight._data.ndim != 2:
            raise meta_error(EMBEDDING, (indices, weight), attrs)
        vocabulary = weight._data.shape[0]
        if padding_idx is not None:
            if not -vocabulary <= padding_idx < vocabulary:
                raise argument_error("embedding", f"padding_idx {padding_idx} is out of range for "
                                     f"{vocabulary} embeddings",
                                     f"use an index in [{-vocabulary}, {vocabulary - 1}] or None",
                                     values=(indices, weight), padding_idx=padding_idx)
            attrs["padding_idx"] = padding_idx % vocabulary
        check_indices("embedding", (indices, weight), indices, vocabulary, "index", "embeddings",
                      f"the vocabulary has {vocabulary} rows (max index {vocabulary - 1}): grow "
                      "num_embeddings or fix the tokenizer/vocabulary that produced this index")
        return apply(EMBEDDING, (indices, weight), attrs)
    except FwError as err:
        raise located(err, "embedding", (indices, weight), padding_idx=padding_idx) from None


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {"softmax": softmax, "log_softmax": log_softmax}
