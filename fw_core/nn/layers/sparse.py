"""Embedding and EmbeddingBag: a lookup table of learned vectors, one row per token id,
looked up one id at a time or reduced over bags of ids."""

from __future__ import annotations

__all__ = ["Embedding", "EmbeddingBag"]

from ...autograd import no_grad
from ...errors import ShapeError, UnsupportedError
from ...ops.creation import empty
from ...ops.meta import argument_error
from .. import init
from ..embedding_composed import embedding, embedding_bag
from ..module import Module
from ..parameter import Parameter
from ._check import check_choice, check_size


class _EmbeddingTable(Module):
    """The (num_embeddings, embedding_dim) weight, its checks and its initialisation, which
    Embedding and EmbeddingBag share (``_weight`` gives the table, ``_freeze`` stops its
    gradient)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False, _weight=None,
                 _freeze: bool = False, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        if sparse:
            raise argument_error(
                name, "sparse gradients are not implemented", "pass "
                "sparse=False: the weight then gets a dense gradient", error=UnsupportedError,
                sparse=sparse)
        shown = {"num_embeddings": num_embeddings, "embedding_dim": embedding_dim,
                 "padding_idx": padding_idx}
        check_size(name, "num_embeddings", num_embeddings, least=0, **shown)
        check_size(name, "embedding_dim", embedding_dim, least=0, **shown)
        if padding_idx is not None:
            check_size(name, "padding_idx", padding_idx, least=-num_embeddings, **shown)
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise argument_error(
                    name, f"padding_idx {padding_idx} is out of range for "
                    f"{num_embeddings} embeddings", f"use an index in [{-num_embeddings}, "
                    f"{num_embeddings - 1}] or None", error=ShapeError, **shown)
            padding_idx %= num_embeddings
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, device=device,
                                          dtype=dtype), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ShapeError(f"{name}: _weight has shape {tuple(_weight.shape)}, expected "
                                 f"({num_embeddings}, {embedding_dim})",
                                 hint="pass a weight of shape (num_embeddings, embedding_dim)")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        """N(0, 1), with the padding row zeroed."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0


class Embedding(_EmbeddingTable):
    """Rows of a (num_embeddings, embedding_dim) weight looked up by integer ids.

    Args:
        num_embeddings: vocabulary size (ids are in [0, num_embeddings)).
        embedding_dim: size of each vector.
        padding_idx: a row that starts at zero and never receives a gradient (negative counts
            from the end).
        max_norm: rows looked up with a larger ``norm_type``-norm are renormalised to it, in
            place, before each lookup (as PyTorch).
        norm_type: the p of that norm.
        scale_grad_by_freq: divide each row's gradient by its id's count in the batch.

    Shape: (*) int64 -> (*, embedding_dim). ``weight`` is initialised from N(0, 1) as PyTorch.

    Raises:
        UnsupportedError: for sparse=True (fw has no sparse gradients).
        FwError: in forward, for an id outside the vocabulary (naming it).
    """

    def forward(self, x):
        return embedding(x, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                         self.scale_grad_by_freq, self.sparse)

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, padding_idx: int | None = None,
                        **kwargs) -> Embedding:
        """An Embedding holding ``embeddings`` (2-d), frozen unless ``freeze=False``."""
        if embeddings.ndim != 2:
            raise ShapeError(f"from_pretrained expects a 2-d weight, got shape "
                             f"{tuple(embeddings.shape)}",
                             hint="pass a (num_embeddings, embedding_dim) tensor")
        rows, dim = embeddings.shape
        return cls(rows, dim, padding_idx, _weight=embeddings, _freeze=freeze, **kwargs)

    def extra_repr(self) -> str:
        out = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            out += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            out += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            out += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            out += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse:
            out += ", sparse=True"
        return out


class EmbeddingBag(_EmbeddingTable):
    """Sums, means or maxima of bags of embedding rows (:func:`fw.nn.functional.embedding_bag`)
    without the per-position lookups.

    Args:
        num_embeddings, embedding_dim, padding_idx, max_norm, norm_type, scale_grad_by_freq:
            as Embedding (entries equal to ``padding_idx`` are left out of their bag).
        mode: "sum", "mean" (the default) or "max".
        include_last_offset: offsets has one entry per bag plus the end of the input.

    Forward(input, offsets=None, per_sample_weights=None): a 2-d input is one bag per row; a
    1-d input is split at ``offsets``. ``per_sample_weights`` (input's shape) weights each row
    (mode "sum"). Returns (bags, embedding_dim).
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight=None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device=None, dtype=None):
        check_choice("EmbeddingBag", "mode", mode, ("mean", "sum", "max"))
        super().__init__(num_embeddings, embedding_dim, padding_idx, max_norm, norm_type,
                         scale_grad_by_freq, sparse, _weight, device=device, dtype=dtype)
        self.mode = mode
        self.include_last_offset = include_last_offset

    def forward(self, input, offsets=None, per_sample_weights=None):  # noqa: A002
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse,
                             per_sample_weights, self.include_last_offset, self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        mode: str = "mean", sparse: bool = False,
                        include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag holding ``embeddings`` (2-d), frozen unless ``freeze=False``."""
        if embeddings.ndim != 2:
            raise ShapeError(f"from_pretrained expects a 2-d weight, got shape "
                             f"{tuple(embeddings.shape)}",
                             hint="pass a (num_embeddings, embedding_dim) tensor")
        bag = cls(*embeddings.shape, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  embeddings, include_last_offset, padding_idx)
        bag.weight.requires_grad_(not freeze)
        return bag

    def extra_repr(self) -> str:
        out = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            out += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            out += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            out += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        out += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            out += f", padding_idx={self.padding_idx}"
        return out
