"""Input checks shared by layers: errors raised where the user's mistake is visible."""

from __future__ import annotations

from ..._state import state
from ...errors import ShapeError


def check_features(layer: str, x, expected: int, name: str = "in_features",
                   dim: int = -1) -> None:
    """Raise a ShapeError naming the layer, the module path, the expected size and the shape
    that arrived, unless ``x.shape[dim] == expected``."""
    shape = tuple(x.shape)
    if len(shape) > (dim if dim >= 0 else -dim - 1) and shape[dim] == expected:
        return
    where = "last dimension" if dim == -1 else f"dimension {dim}"
    got = shape[dim] if len(shape) > (dim if dim >= 0 else -dim - 1) else None
    raise ShapeError(
        f"expected an input whose {where} is {name}={expected}, got shape {shape}",
        op=layer, module=state.module_path or None,
        hint=(f"build the layer with {name}={got}, or " if got is not None else "")
        + f"reshape the input so its {where} has size {expected}")


def check_ndim(layer: str, x, allowed: tuple[int, ...], layout: str) -> None:
    """Raise a ShapeError unless ``x.ndim`` is one of ``allowed`` (``layout`` names them)."""
    if x.ndim in allowed:
        return
    raise ShapeError(
        f"expected a {' or '.join(f'{n}-d' for n in allowed)} input {layout}, got shape "
        f"{tuple(x.shape)}",
        op=layer, module=state.module_path or None,
        hint="add the batch dimension with x.unsqueeze(0)" if x.ndim == min(allowed) - 1
        else "reshape the input to the layout above")
