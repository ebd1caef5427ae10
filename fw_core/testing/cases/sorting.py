"""Cases for :mod:`fw_core.ops.sorting`: argsort on floats with ties and NaN, on integers and
bools, each direction and dimension (and through sort/topk, whose values carry gradients); the
order statistics kthvalue, median (lower; ties and NaN) and mode (its index op)."""

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


def _mode(x, dim):
    """The most frequent value along ``dim`` (the smallest of equally frequent ones)."""
    def one(row):
        values, counts = np.unique(row, return_counts=True)
        return values[np.argmax(counts)]
    return np.apply_along_axis(one, dim, x)


def _last_occurrence(x, dim):
    mode = np.expand_dims(_mode(x, dim), dim)
    positions = np.arange(x.shape[dim]).reshape([-1 if a == dim else 1 for a in range(x.ndim)])
    return np.where(x == mode, positions, -1).max(axis=dim)


_REPEATS = np.array([[3.0, 1.0, 3.0, 2.0, 1.0, 3.0, 1.0], [5.0, 5.0, 2.0, 2.0, 7.0, 0.0, 9.0],
                     [4.0, 4.0, 4.0, -1.0, -1.0, 6.0, 6.0]])
_MEDIAN_NAN = np.array([[1.0, np.nan, 3.0, 2.0, np.nan], [1.0, 2.0, 3.0, 4.0, 0.5]])

# order statistics: kthvalue and median are argsort's order at one position, mode its own op
CASES += [
    *[OpCase("argsort", f"kthvalue_k{k}_dim{dim}", [arg(4, 5)],
             lambda fw, x, k=k, d=dim: fw.kthvalue(x, k, d).values,
             lambda x, k=k, d=dim: np.take(np.sort(x, axis=d), k - 1, axis=d),
             torch=lambda torch, x, k=k, d=dim: torch.kthvalue(x, k, d).values)
      for k, dim in ((1, 0), (3, -1), (4, 0))],
    OpCase("argsort", "kthvalue_indices_keepdim", [arg(3, 6)],
           lambda fw, x: fw.kthvalue(x, 2, 1, keepdim=True).indices,
           lambda x: np.argsort(x, axis=1, kind="stable")[:, 1:2],
           torch=lambda torch, x: torch.kthvalue(x, 2, 1, keepdim=True).indices, grad=False),
    *[OpCase("argsort", f"median_{n}_values", [arg(3, n)],
             lambda fw, x: fw.median(x, 1).values,
             lambda x: np.sort(x, axis=1)[:, (x.shape[1] - 1) // 2],
             torch=lambda torch, x: torch.median(x, 1).values)
      for n in (5, 6)],
    OpCase("argsort", "median_all_lower", [arg(4, 6)], lambda fw, x: fw.median(x),
           lambda x: np.sort(x, axis=None)[(x.size - 1) // 2],
           torch=lambda torch, x: torch.median(x)),
    OpCase("argsort", "median_ties_first_index", [value(_REPEATS)],
           lambda fw, x: fw.median(fw.tensor(x), 1).indices,
           lambda x: np.argsort(x, axis=1, kind="stable")[:, (x.shape[1] - 1) // 2],
           torch=lambda torch, x: torch.median(x, 1).indices, dtypes=("float64",), grad=False),
    OpCase("argsort", "median_nan_first", [value(_MEDIAN_NAN)],
           lambda fw, x: fw.median(fw.tensor(x), 1).indices, lambda x: np.array([1, 1]),
           torch=lambda torch, x: torch.median(x, 1).indices, dtypes=("float64",), grad=False),
    OpCase("mode_index", "last_occurrence", [value(_REPEATS)],
           lambda fw, x: fw.mode(fw.tensor(x), 1).indices, lambda x: _last_occurrence(x, 1),
           torch=lambda torch, x: torch.mode(x, 1).indices, dtypes=("float64",), grad=False),
    OpCase("mode_index", "ints_dim0", [value(np.array([[2, 2, 1], [1, 2, 1], [2, 0, 0]]))],
           lambda fw, x: fw.tensor(x).mode(0).indices, lambda x: _last_occurrence(x, 0),
           torch=lambda torch, x: torch.mode(x, 0).indices, dtypes=("int64",), grad=False),
    # distinct values: each occurs once, so the mode is the smallest, and its gradient goes there
    OpCase("mode_index", "values_carry_gradients", [arg(3, 6)],
           lambda fw, x: fw.mode(x, 1).values, lambda x: x.min(axis=1),
           torch=lambda torch, x: torch.mode(x, 1).values),
]
