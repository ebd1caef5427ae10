"""Cases for :mod:`fw_core.ops.scans`: cummax/cummin on floats (with ties and NaN), integers,
both dimensions, and their values' gradients through the gather; cumprod (zeros included, whose
gradient PyTorch's matches) and logcumsumexp (large and -inf values) forward, backward and
against torch."""

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


def _logcumsumexp(x, dim):
    return np.logaddexp.accumulate(x.astype(np.float64), axis=dim).astype(x.dtype)


CASES += [
    *[OpCase("cumprod", f"dim{dim}", [arg(3, 5, low=0.5, high=1.5)],
             lambda fw, x, d=dim: fw.cumprod(x, d), lambda x, d=dim: np.cumprod(x, axis=d),
             torch=lambda torch, x, d=dim: torch.cumprod(x, d), dtypes=("float32", "float64"))
      for dim in (0, 1, -1)],
    OpCase("cumprod", "signed", [arg(4, 6)], lambda fw, x: fw.cumprod(x, 1),
           lambda x: np.cumprod(x, axis=1), torch=lambda torch, x: torch.cumprod(x, 1)),
    OpCase("cumprod", "scalar", [arg()], lambda fw, x: fw.cumprod(x, 0), lambda x: x,
           torch=lambda torch, x: torch.cumprod(x, 0)),
    OpCase("cumprod", "empty", [arg(2, 0, 3)], lambda fw, x: fw.cumprod(x, 1),
           lambda x: np.cumprod(x, axis=1), torch=lambda torch, x: torch.cumprod(x, 1)),
    OpCase("cumprod", "ints_give_int64", [value(np.array([[2, -3, 1], [0, 5, 2]], np.int32))],
           lambda fw, x: fw.cumprod(fw.tensor(x), 1),
           lambda x: np.cumprod(x, axis=1, dtype=np.int64),
           torch=lambda torch, x: torch.cumprod(x, 1), dtypes=("int32",), grad=False),
    # values with zeros (their gradient: tests/fw_core/ops/test_scans.py)
    OpCase("cumprod", "zeros", [value(np.array([[2.0, 0.0, 3.0, 0.0, 4.0], [0.0, 1.5, -2.0, 1.0,
                                                                          0.5]]))],
           lambda fw, x: fw.cumprod(fw.tensor(x), 1), lambda x: np.cumprod(x, axis=1),
           torch=lambda torch, x: torch.cumprod(x, 1), dtypes=("float64",), grad=False),
    *[OpCase("logcumsumexp", f"dim{dim}", [arg(4, 5)],
             lambda fw, x, d=dim: fw.logcumsumexp(x, d), lambda x, d=dim: _logcumsumexp(x, d),
             torch=lambda torch, x, d=dim: torch.logcumsumexp(x, d),
             dtypes=("float32", "float64", "float16"))
      for dim in (0, 1)],
    OpCase("logcumsumexp", "scalar", [arg()], lambda fw, x: fw.logcumsumexp(x, 0), lambda x: x,
           torch=lambda torch, x: torch.logcumsumexp(x, 0)),
    OpCase("logcumsumexp", "large_values", [arg(3, 6, low=-500.0, high=500.0)],
           lambda fw, x: fw.logcumsumexp(x, 1), lambda x: _logcumsumexp(x, 1),
           torch=lambda torch, x: torch.logcumsumexp(x, 1), double_grad=False),
    OpCase("logcumsumexp", "infinities", [value(np.array([[-np.inf, -np.inf, 1.0, 1000.0],
                                                          [3.0, -np.inf, np.inf, 2.0]]))],
           lambda fw, x: fw.logcumsumexp(fw.tensor(x), 1), lambda x: _logcumsumexp(x, 1),
           torch=lambda torch, x: torch.logcumsumexp(x, 1), dtypes=("float64",), grad=False),
]
