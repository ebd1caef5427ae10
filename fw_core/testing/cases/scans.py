"""Cases for :mod:`fw_core.ops.scans`: cummax/cummin on floats (with ties and NaN), integers,
both dimensions, and their values' gradients through the gather."""

import numpy as np

from fw_core.testing.conformance import OpCase, arg, value

_TIES = np.array([[1.0, 3.0, 2.0, 3.0, 0.0], [3.0, 1.0, np.nan, 4.0, 0.0]])
_ACCUMULATE = {"cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate}


def _indices(name, x, dim):
    running = _ACCUMULATE[name](x, axis=dim)
    shape = [1] * x.ndim
    shape[dim] = x.shape[dim]
    positions = np.arange(x.shape[dim]).reshape(shape)
    reached = (x == running) | np.isnan(x) if x.dtype.kind == "f" else x == running
    return np.maximum.accumulate(np.where(reached, positions, 0), axis=dim)


CASES = [
    *[OpCase(f"{name}_index", f"indices_dim{dim}", [arg(4, 5)],
             lambda fw, x, n=name, d=dim: getattr(fw, n)(x, d).indices,
             lambda x, n=name, d=dim: _indices(n, x, d),
             torch=lambda torch, x, n=name, d=dim: getattr(torch, n)(x, d).indices, grad=False)
      for name in ("cummax", "cummin") for dim in (0, 1)],
    *[OpCase(f"{name}_index", "values_carry_gradients", [arg(3, 6)],
             lambda fw, x, n=name: getattr(fw, n)(x, 1).values,
             lambda x, n=name: _ACCUMULATE[n](x, axis=1),
             torch=lambda torch, x, n=name: getattr(torch, n)(x, 1).values)
      for name in ("cummax", "cummin")],
    *[OpCase(f"{name}_index", "ties_and_nan", [value(_TIES)],
             lambda fw, x, n=name: getattr(fw, n)(fw.tensor(x), 1).indices,
             lambda x, n=name: _indices(n, x, 1),
             torch=lambda torch, x, n=name: getattr(torch, n)(x, 1).indices,
             dtypes=("float64",), grad=False)
      for name in ("cummax", "cummin")],
    *[OpCase(f"{name}_index", "ints", [value(np.array([[2, 2, 1, 2, 5, 5]]))],
             lambda fw, x, n=name: getattr(fw, n)(fw.tensor(x), 1).indices,
             lambda x, n=name: _indices(n, x, 1),
             torch=lambda torch, x, n=name: getattr(torch, n)(x, 1).indices,
             dtypes=("int64",), grad=False)
      for name in ("cummax", "cummin")],
]
