"""Cases for :mod:`fw_core.ops.sorting`: argsort on floats with ties and NaN, on integers and
bools, each direction and dimension (and through sort/topk, whose values carry gradients)."""

import numpy as np

from fw_core.testing.conformance import OpCase, arg, value


def _stable(x, dim, descending):
    if not descending:
        return np.argsort(x, axis=dim, kind="stable")
    flipped = np.argsort(np.flip(x, dim), axis=dim, kind="stable")
    return x.shape[dim] - 1 - np.flip(flipped, dim)


_TIES = np.array([[3.0, 1.0, 3.0, np.nan, -2.0, 1.0], [0.0, -0.5, 7.0, 7.0, 2.0, np.nan]])

CASES = [
    *[OpCase("argsort", f"dim{dim}_{'desc' if descending else 'asc'}", [arg(4, 5)],
             lambda fw, x, d=dim, s=descending: fw.argsort(x, d, s),
             lambda x, d=dim, s=descending: _stable(x, d, s),
             torch=lambda torch, x, d=dim, s=descending: torch.argsort(x, dim=d, descending=s,
                                                                     stable=True),
             grad=False)
      for dim in (0, -1) for descending in (False, True)],
    *[OpCase("argsort", f"ties_and_nan_{'desc' if descending else 'asc'}", [value(_TIES)],
             lambda fw, x, s=descending: fw.argsort(fw.tensor(x), 1, s),
             lambda x, s=descending: _stable(x, 1, s),
             torch=lambda torch, x, s=descending: torch.argsort(x, dim=1, descending=s,
                                                                 stable=True),
             dtypes=("float64",), grad=False)
      for descending in (False, True)],
    OpCase("argsort", "ints", [value(np.array([[5, -7, 5, 0], [2, 2, -1, 9]]))],
           lambda fw, x: fw.tensor(x).argsort(descending=True),
           lambda x: _stable(x, -1, True),
           torch=lambda torch, x: torch.argsort(x, descending=True, stable=True),
           dtypes=("int64",), grad=False),
    OpCase("argsort", "sort_values_carry_gradients", [arg(3, 5)],
           lambda fw, x: fw.sort(x, 1, descending=True).values,
           lambda x: np.take_along_axis(x, _stable(x, 1, True), 1),
           torch=lambda torch, x: torch.sort(x, dim=1, descending=True, stable=True).values),
    OpCase("argsort", "topk_values", [arg(4, 6)], lambda fw, x: fw.topk(x, 3, 1).values,
           lambda x: np.take_along_axis(x, _stable(x, 1, True)[:, :3], 1),
           torch=lambda torch, x: torch.topk(x, 3, 1).values),
    OpCase("argsort", "topk_smallest_dim0", [arg(5, 3)],
           lambda fw, x: fw.topk(x, 2, 0, largest=False).values,
           lambda x: np.take_along_axis(x, _stable(x, 0, False)[:2], 0),
           torch=lambda torch, x: torch.topk(x, 2, 0, largest=False).values),
    OpCase("argsort", "scalar", [arg()], lambda fw, x: fw.argsort(x), lambda x: np.int64(0),
           torch=lambda torch, x: torch.argsort(x), grad=False),
]
