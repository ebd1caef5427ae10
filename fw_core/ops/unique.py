"""Distinct values: ``unique`` and ``unique_consecutive``, as in PyTorch.

Their result's length depends on the values, so no meta rule can state it: they read the input
on the host (under ``fw.compile`` that is a logged graph break, as ``.numpy()`` is) and build
their results on the input's device. They are not differentiable, as in PyTorch. Each NaN is
its own value, as in PyTorch; results are always sorted (``sorted=False`` is accepted, and
PyTorch's CPU kernel sorts too).
"""

from __future__ import annotations

__all__ = ["unique", "unique_consecutive"]

import numpy as np

from ..errors import IndexOutOfRangeError
from .meta import normalize_dim


def _host(input, op: str, dim):
    values = input.detach().numpy()
    if dim is None:
        return values.reshape(-1), None
    if values.ndim == 0:
        raise IndexOutOfRangeError(f"dim {dim} given for a 0-d input", op=op,
                                   hint="leave dim=None for a 0-d tensor")
    return values, normalize_dim(dim, values.ndim, op)


def _results(input, found, inverse, counts, return_inverse, return_counts, shape_of_inverse):
    from .creation import tensor

    device = input.device
    out = [tensor(found, device=device)]
    if return_inverse:
        out.append(tensor(inverse.reshape(shape_of_inverse).astype(np.int64), device=device))
    if return_counts:
        out.append(tensor(counts.astype(np.int64), device=device))
    return out[0] if len(out) == 1 else tuple(out)


def _inverse_shape(input, dim):
    return tuple(input.shape) if dim is None else (input.shape[dim],)


def unique(input, sorted: bool = True, return_inverse: bool = False,  # noqa: A002 - torch's
           return_counts: bool = False, dim: int | None = None):
    """The distinct values of ``input`` (flattened), or its distinct slices along ``dim``, in
    ascending order; with ``return_inverse`` where each element (slice) went, shaped like the
    input (``(size of dim,)``); with ``return_counts`` how often each occurs."""
    values, axis = _host(input, "unique", dim)
    if axis is None and values.dtype.kind in "fc":
        found, inverse, counts = np.unique(values, return_inverse=True, return_counts=True,
                                           equal_nan=False)
    else:
        found, inverse, counts = np.unique(values, return_inverse=True, return_counts=True,
                                           axis=axis)
    return _results(input, found, inverse.reshape(-1), counts, return_inverse, return_counts,
                    _inverse_shape(input, axis))


def unique_consecutive(input, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None):
    """``input`` with each run of equal consecutive values (slices along ``dim``) collapsed to
    one; with ``return_inverse`` each element's run, with ``return_counts`` each run's length."""
    values, axis = _host(input, "unique_consecutive", dim)
    moved = values if axis is None else np.moveaxis(values, axis, 0)
    length = moved.shape[0]
    changed = (moved[1:] != moved[:-1]).any(axis=tuple(range(1, moved.ndim)))
    starts = np.concatenate([[length > 0], changed])[:length]
    found = moved[starts]
    if axis is not None:
        found = np.moveaxis(found, 0, axis)
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), length))
    return _results(input, np.ascontiguousarray(found), inverse, counts, return_inverse,
                    return_counts, _inverse_shape(input, axis))


#: Tensor methods this family provides (bound by fw_core.tensor_methods)
METHODS = {name: globals()[name] for name in __all__}
