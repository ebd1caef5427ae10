"""Running selections: ``cummax`` and ``cummin``. The ops are their index scans (int64, not
differentiable): where the running maximum (minimum) along ``dim`` was last reached. The values
are a ``gather`` of those indices, so each running value's gradient goes to the element it
came from, as in PyTorch. Ties take the latest index, and a NaN, once met, stays the running
value (with its own index), as in PyTorch.
"""

from __future__ import annotations

__all__ = ["cummax", "cummin"]

from .. import dtypes as _dt
from ..records import Structure, TensorSpec
from . import anchors
from .dispatch import apply
from .indexing import gather
from .meta import normalize_dim
from .reduction import ValuesIndices
from .registry import define_op


def _index_meta(x, dim):
    return TensorSpec(tuple(x.shape), _dt.int64)


def _scan_op(name, which):
    return define_op(
        name, family="scans", builtin=True,
        doc=f"Where the running {which} of x along dim was last reached (int64); NaN, once "
            "met, stays.",
        signature=f"{name}(x: Tensor, dim: int) -> Tensor[int64]", meta=_index_meta, vjp=None,
        structure=Structure.NONE,
        anchor=anchors.flat("indices are piecewise constant in the values: the gradient flows "
                            "through the gathered values instead"))


CUMMAX_INDEX = _scan_op("cummax_index", "maximum")
CUMMIN_INDEX = _scan_op("cummin_index", "minimum")


def _running(op, input, dim):
    axis = normalize_dim(dim, input.ndim, op.name)
    indices = apply(op, (input,), {"dim": axis})
    if input.ndim == 0:
        return ValuesIndices(input, indices)
    return ValuesIndices(gather(input, axis, indices), indices)


def cummax(input, dim: int):
    """``(values, indices)``: the running maximum of ``input`` along ``dim`` and where each
    was reached."""
    return _running(CUMMAX_INDEX, input, dim)


def cummin(input, dim: int):
    """``(values, indices)``: the running minimum of ``input`` along ``dim`` and where each
    was reached."""
    return _running(CUMMIN_INDEX, input, dim)


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in __all__}
