"""Embedding: a lookup table of learned vectors, one row per token id."""

from __future__ import annotations

__all__ = ["Embedding"]

from ...autograd import no_grad
from ...errors import ShapeError, UnsupportedError
from ...ops.creation import empty
from ...ops.meta import argument_error
from ...ops.nn import embedding
from .. import init
from ..module import Module
from ..parameter import Parameter
from ._check import check_size


class Embedding(Module):
    """Rows of a (num_embeddings, embedding_dim) weight looked up by integer ids.

    Args:
        num_embeddings: vocabulary size (ids are in [0, num_embeddings)).
        embedding_dim: size of each vector.
        padding_idx: a row that starts at zero and never receives a gradient (negative counts
            from the end).

    Shape: (*) int64 -> (*, embedding_dim). ``weight`` is initialised from N(0, 1) as PyTorch.

    Raises:
        UnsupportedError: for max_norm, scale_grad_by_freq or sparse (not implemented).
        FwError: in forward, for an id outside the vocabulary (naming it).
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False, _weight=None,
                 _freeze: bool = False, device=None, dtype=None):
        super().__init__()
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise argument_error(
                "Embedding", "max_norm, scale_grad_by_freq and sparse gradients are not "
                "implemented", "drop these arguments; renormalise the weight under "
                "fw.no_grad() yourself if you need max_norm", error=UnsupportedError,
                max_norm=max_norm, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)
        shown = {"num_embeddings": num_embeddings, "embedding_dim": embedding_dim,
                 "padding_idx": padding_idx}
        check_size("Embedding", "num_embeddings", num_embeddings, least=0, **shown)
        check_size("Embedding", "embedding_dim", embedding_dim, least=0, **shown)
        if padding_idx is not None:
            check_size("Embedding", "padding_idx", padding_idx, least=-num_embeddings, **shown)
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise argument_error(
                    "Embedding", f"padding_idx {padding_idx} is out of range for "
                    f"{num_embeddings} embeddings", f"use an index in [{-num_embeddings}, "
                    f"{num_embeddings - 1}] or None", error=ShapeError, **shown)
            padding_idx %= num_embeddings
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, device=device,
                                          dtype=dtype), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ShapeError(f"Embedding: _weight has shape {tuple(_weight.shape)}, expected "
                                 f"({num_embeddings}, {embedding_dim})",
                                 hint="pass a weight of shape (num_embeddings, embedding_dim)")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        """N(0, 1), with the padding row zeroed."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, x):
        return embedding(x, self.weight, self.padding_idx)

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
        return out
