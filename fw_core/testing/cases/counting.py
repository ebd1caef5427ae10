"""Cases for :mod:`fw_core.ops.counting`: histc over a given range (values on the edges, outside
it and NaN) and over the data's own range; bincount with and without weights and minlength."""

import numpy as np

from fw_core.testing.conformance import OpCase, arg, value


def _histc(x, bins, low, high):
    inside = x[(x >= low) & (x <= high)]
    position = np.minimum(((inside - low) * bins / (high - low)).astype(np.int64), bins - 1)
    return np.bincount(position, minlength=bins).astype(x.dtype)


_EDGES = np.array([0.0, 1.0, 2.0, 2.5, 4.0, 5.0, -1.0, np.nan, 3.999])
_COUNTED = np.array([1, 3, 3, 0, 7, 3], np.int64)

CASES = [
    OpCase("histc", "given_range", [arg(5, 7)], lambda fw, x: fw.histc(x, bins=6, min=-1, max=1),
           lambda x: _histc(x, 6, -1.0, 1.0),
           torch=lambda torch, x: torch.histc(x, bins=6, min=-1, max=1), grad=False),
    OpCase("histc", "data_range", [arg(40)], lambda fw, x: fw.histc(x, bins=5),
           lambda x: _histc(x, 5, float(x.min()), float(x.max())),
           torch=lambda torch, x: torch.histc(x, bins=5), grad=False),
    OpCase("histc", "edges_outside_and_nan", [value(_EDGES)],
           lambda fw, x: fw.tensor(x).histc(bins=4, min=0, max=4),
           lambda x: _histc(x, 4, 0.0, 4.0),
           torch=lambda torch, x: torch.histc(x, bins=4, min=0, max=4), dtypes=("float64",),
           grad=False),
    OpCase("histc", "one_value_widened", [value(np.array([3.0, 3.0]))],
           lambda fw, x: fw.histc(fw.tensor(x), bins=4), lambda x: _histc(x, 4, 2.0, 4.0),
           torch=lambda torch, x: torch.histc(x, bins=4), dtypes=("float64",), grad=False),
    OpCase("bincount", "counts", [value(_COUNTED)], lambda fw, x: fw.bincount(fw.tensor(x)),
           np.bincount, torch=lambda torch, x: torch.bincount(x), dtypes=("int64",),
           grad=False),
    OpCase("bincount", "minlength", [value(_COUNTED)],
           lambda fw, x: fw.tensor(x).bincount(minlength=10),
           lambda x: np.bincount(x, minlength=10),
           torch=lambda torch, x: torch.bincount(x, minlength=10), dtypes=("int64",),
           grad=False),
    OpCase("bincount", "weights", [value(_COUNTED), arg(6)],
           lambda fw, x, w: fw.bincount(fw.tensor(x), w),
           lambda x, w: np.bincount(x, weights=w).astype(w.dtype),
           torch=lambda torch, x, w: torch.bincount(x, w), grad=False),
    OpCase("bincount", "int_weights_give_float64",
           [value(_COUNTED), value(np.array([1, 2, 3, 4, 5, 6]))],
           lambda fw, x, w: fw.bincount(fw.tensor(x), fw.tensor(w)),
           lambda x, w: np.bincount(x, weights=w), torch=lambda torch, x, w: torch.bincount(x, w),
           dtypes=("int64",), grad=False),
]
