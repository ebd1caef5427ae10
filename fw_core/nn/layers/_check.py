"""Input checks shared by layers: errors raised where the user's mistake is visible."""

from __future__ import annotations

import numbers

from ..._state import state
from ...errors import ArgumentTypeError, ShapeError
from ...ops.dispatch import not_a_tensor
from ...ops.meta import argument_error, describe


def check_features(layer: str, x, expected: int, name: str = "in_features",
                   dim: int = -1) -> None:
    """Raise a ShapeError naming the layer, the module path, the expected size and the shape
    that arrived, unless ``x.shape[dim] == expected`` (an ArgumentTypeError unless x is a
    tensor)."""
    try:
        shape = tuple(x.shape)
    except AttributeError:
        raise not_a_tensor(layer, x) from None
    if len(shape) > (dim if dim >= 0 else -dim - 1) and shape[dim] == expected:
        return
    where = "last dimension" if dim == -1 else f"dimension {dim}"
    got = shape[dim] if len(shape) > (dim if dim >= 0 else -dim - 1) else None
    raise ShapeError(
        f"expected an input whose {where} is {name}={expected}, got shape {shape}",
        op=layer, module=state.module_path or None, inputs=describe((x,)),
        hint=(f"build the layer with {name}={got}, or " if got is not None else "")
        + f"reshape the input so its {where} has size {expected}")


def check_ndim(layer: str, x, allowed: tuple[int, ...], layout: str) -> None:
    """Raise a ShapeError unless ``x.ndim`` is one of ``allowed`` (``layout`` names them)."""
    try:
        if x.ndim in allowed:
            return
    except AttributeError:
        raise not_a_tensor(layer, x) from None
    raise ShapeError(
        f"expected a {' or '.join(f'{n}-d' for n in allowed)} input {layout}, got shape "
        f"{tuple(x.shape)}",
        op=layer, module=state.module_path or None, inputs=describe((x,)),
        hint="add the batch dimension with x.unsqueeze(0)" if x.ndim == min(allowed) - 1
        else "reshape the input to the layout above")


# -- constructor arguments: checked once, when the layer is built --------------------------------
def check_size(layer: str, name: str, value, least: int = 1, **arguments) -> int:
    """``value`` as an int >= ``least`` (a number of features, channels, layers, heads), or an
    error naming the layer and showing ``arguments`` (default: just this one) as its inputs."""
    shown = arguments or {name: value}
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise argument_error(layer, f"{name} must be an int, got {type(value).__name__} "
                             f"{value!r}", f"pass a whole number, e.g. {name}={max(least, 1)}",
                             error=ArgumentTypeError, **shown)
    if value < least:
        raise argument_error(layer, f"{name} must be >= {least}, got {value}",
                             f"pass {name} >= {least}", **shown)
    return int(value)


def check_range(layer: str, name: str, value, low: float, high: float | None = None, *,
                high_open: bool = False, hint: str | None = None, **arguments) -> float:
    """``value`` as a number in [low, high] ([low, high) with ``high_open``; no upper bound
    for high=None), or an error naming the layer."""
    shown = arguments or {name: value}
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise argument_error(layer, f"{name} must be a number, got {type(value).__name__} "
                             f"{value!r}", hint or f"pass a float, e.g. {name}={low}",
                             error=ArgumentTypeError, **shown)
    above = high is not None and (value >= high if high_open else value > high)
    if not value >= low or above:  # `not >=` also catches NaN
        bounds = f"[{low}, {high}{')' if high_open else ']'}" if high is not None else f">= {low}"
        raise argument_error(layer, f"{name} must be {'in ' if high is not None else ''}"
                             f"{bounds}, got {value}",
                             hint or f"pass {name} {'in ' if high is not None else ''}{bounds}",
                             **shown)
    return value


def check_choice(layer: str, name: str, value, choices, **arguments):
    """``value`` if it is one of ``choices``, else an error listing them."""
    if value not in choices:
        raise argument_error(layer, f"{name} must be one of {', '.join(map(repr, choices))}, "
                             f"got {value!r}", f"pass {name}={choices[0]!r}",
                             **(arguments or {name: value}))
    return value
