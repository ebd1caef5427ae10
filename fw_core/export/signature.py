"""What an exported program takes and returns: input names, example arrays, dynamic dimensions
and output names, read from the function and its example inputs."""

from __future__ import annotations

import inspect

import numpy as np

from ..errors import ExportError
from ..tensor import Tensor


class Signature:
    """The inputs of one export: their names, the example arrays and which axes are dynamic.

    ``example_inputs`` is a tensor, a tuple of tensors (passed by position) or a dict of them
    (passed by name). ``dynamic_dims`` maps an input name to ``{axis: dim_name}`` (or a list with
    a dim name or None per axis); axes of several inputs sharing a name must agree in size.
    """

    def __init__(self, fn, example_inputs, dynamic_dims: dict | None):
        self.by_name = isinstance(example_inputs, dict)
        if isinstance(example_inputs, Tensor):
            example_inputs = (example_inputs,)
        if self.by_name:
            self.names = list(example_inputs)
            tensors = list(example_inputs.values())
        else:
            tensors = list(example_inputs)
            self.names = _positional_names(fn, len(tensors))
        for name, t in zip(self.names, tensors):
            if not isinstance(t, Tensor):
                raise ExportError(f"example input {name!r} is a {type(t).__name__}, not a tensor",
                                  hint="pass fw tensors (fw.tensor(array)) as example inputs")
        self.arrays = [t.numpy() for t in tensors]
        self.devices = [t.device for t in tensors]
        self.axes = self._dynamic_axes(dynamic_dims or {})
        self.sizes = self._sizes()

    def _dynamic_axes(self, dynamic_dims: dict) -> dict[str, dict[int, str]]:
        unknown = set(dynamic_dims) - set(self.names)
        if unknown:
            raise ExportError(f"dynamic_dims names {sorted(unknown)}, which are not inputs",
                              hint=f"the inputs are {self.names}")
        axes = {}
        for name, spec in dynamic_dims.items():
            if isinstance(spec, (list, tuple)):
                spec = {i: d for i, d in enumerate(spec) if d is not None}
            ndim = self.arrays[self.names.index(name)].ndim
            bad = [a for a in spec if not -ndim <= a < ndim]
            if bad:
                raise ExportError(f"dynamic_dims[{name!r}] names axes {bad}, but the example "
                                  f"input has {ndim} dimensions", hint="use axes that exist")
            axes[name] = {a % ndim: d for a, d in spec.items()}
        return axes

    def _sizes(self) -> dict[str, int]:
        sizes: dict[str, int] = {}
        for name, spec in self.axes.items():
            shape = self.arrays[self.names.index(name)].shape
            for axis, dim in spec.items():
                if sizes.setdefault(dim, shape[axis]) != shape[axis]:
                    raise ExportError(
                        f"dynamic dimension {dim!r} has sizes {sizes[dim]} and {shape[axis]} "
                        f"in the example inputs (input {name!r}, axis {axis})",
                        hint="give inputs that share a dimension name the same size there")
                if shape[axis] < 2:
                    raise ExportError(
                        f"dynamic dimension {dim!r} has size {shape[axis]} in the example inputs",
                        hint="give an example of size 2 or more: a size-1 dimension broadcasts, "
                             "so the program would be traced for that case only")
        return sizes

    def tensors(self, sizes: dict[str, int]) -> list[Tensor]:
        """The example inputs resized to ``sizes`` (entries repeated cyclically along each
        dynamic axis, so token ids and masks stay valid)."""
        import fw_core as fw

        out = []
        for name, array, device in zip(self.names, self.arrays, self.devices):
            for axis, dim in self.axes.get(name, {}).items():
                picks = np.arange(sizes[dim]) % array.shape[axis]
                array = np.take(array, picks, axis=axis)
            out.append(fw.tensor(np.ascontiguousarray(array), device=device))
        return out

    def shape_of(self, position: int) -> list:
        """The input's shape as the format writes it: dim names on its dynamic axes."""
        spec = self.axes.get(self.names[position], {})
        return [spec.get(i, n) for i, n in enumerate(self.arrays[position].shape)]

    def call(self, fn, tensors: list):
        """``fn`` applied to ``tensors`` the way the example inputs were passed."""
        if self.by_name:
            return fn(**dict(zip(self.names, tensors)))
        return fn(*tensors)


def _positional_names(fn, count: int) -> list[str]:
    try:
        params = [p for p in inspect.signature(getattr(fn, "forward", fn)).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params[:count]]
    return names + [f"input_{i}" for i in range(len(names), count)]


def output_names(result) -> list[str]:
    """``output`` for one tensor, ``output_<i>`` for a tuple or list, the keys of a dict."""
    if isinstance(result, Tensor):
        return ["output"]
    if isinstance(result, dict) and all(isinstance(v, Tensor) for v in result.values()):
        return [str(k) for k in result]
    if isinstance(result, (tuple, list)) and all(isinstance(v, Tensor) for v in result):
        return [f"output_{i}" for i in range(len(result))]
    raise ExportError(f"the function returns a {type(result).__name__}, which a program cannot "
                      "return", hint="return a tensor, or a tuple, list or dict of tensors")


def flat_outputs(result) -> list[Tensor]:
    return list(result.values()) if isinstance(result, dict) else \
        [result] if isinstance(result, Tensor) else list(result)
