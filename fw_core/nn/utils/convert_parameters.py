"""Parameters flattened into one vector and back, as ``torch.nn.utils.parameters_to_vector``
and ``vector_to_parameters`` (second-order methods, evolution strategies, weight averaging)."""

from __future__ import annotations

__all__ = ["parameters_to_vector", "vector_to_parameters"]

from collections.abc import Iterable

from ...autograd import no_grad
from ...errors import ArgumentTypeError, ShapeError
from ...ops.shape import cat, narrow, reshape
from ...tensor import Tensor


def _same_device(parameters: list) -> None:
    devices = {str(p.device) for p in parameters}
    if len(devices) > 1:
        raise ArgumentTypeError("Found two parameters on different devices, this is currently not "
                                f"supported (found {', '.join(sorted(devices))})",
                                op="parameters_to_vector",
                                hint="move the model to one device first")


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All of ``parameters`` flattened and concatenated, in order: one 1-d tensor (which
    carries gradients back to them)."""
    parameters = list(parameters)
    _same_device(parameters)
    return cat([reshape(p, (-1,)) for p in parameters], 0)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-d ``vec`` into ``parameters`` (in place, untracked),
    the inverse of :func:`parameters_to_vector`.

    Raises:
        ArgumentTypeError: if ``vec`` is not a tensor; ShapeError if it is too short.
    """
    if not isinstance(vec, Tensor):
        raise ArgumentTypeError(f"expected fw.Tensor, but got: {type(vec).__name__}",
                                op="vector_to_parameters", hint="pass a 1-d tensor")
    parameters = list(parameters)
    _same_device([vec, *parameters])
    needed = sum(p.numel() for p in parameters)
    if vec.ndim != 1 or vec.shape[0] < needed:
        raise ShapeError(f"vec has shape {tuple(vec.shape)} but the parameters hold {needed} "
                         "values", op="vector_to_parameters",
                         hint="pass parameters_to_vector(parameters) (or one that long)")
    pointer = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(reshape(narrow(vec, 0, pointer, n), tuple(p.shape)))
            pointer += n
