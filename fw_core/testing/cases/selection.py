"""Cases for :mod:`fw_core.ops.selection` and :mod:`fw_core.ops.index_update`: nonzero,
masked_select/masked_scatter, take/take_along_dim, repeat_interleave, index_add/copy/fill,
index_write and scatter_reduce (every reduction, with and without the input's own values, ties
and zeros)."""

import numpy as np

from fw_core.testing.conformance import OpCase, arg, index, mask, value

_INDEX = np.array([[0, 1, 0, 2], [2, 2, 1, 0], [1, 0, 0, 0]])
_REDUCE = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum,
           "amin": np.minimum}


def same(call):
    """``fn`` and ``torch`` from one call both libraries spell alike."""
    return {"fn": lambda fw, *xs: call(*xs), "torch": lambda torch, *xs: call(*xs)}


def _scatter_reduce(x, dim, idx, src, reduce, include_self=True):
    out = x.astype(np.float64).copy()
    fancy = tuple(idx if d == dim else np.arange(n).reshape(
        (1,) * d + (n,) + (1,) * (idx.ndim - d - 1)) for d, n in enumerate(idx.shape))
    if not include_self:
        out[fancy] = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}[reduce]
    _REDUCE[reduce].at(out, fancy, src)
    if reduce == "mean":
        counts = np.full(x.shape, int(include_self))
        np.add.at(counts, fancy, 1)
        out = np.where(counts > 0, out / np.maximum(counts, 1), x)
    return out.astype(x.dtype)


def _masked_scatter(x, m, s):
    out = np.broadcast_to(x, np.broadcast_shapes(x.shape, m.shape)).copy()
    full = np.broadcast_to(m, out.shape)
    out[full] = s.reshape(-1)[:full.sum()]
    return out


def _index_add(x, dim, idx, src, alpha):
    out = x.copy()
    np.add.at(out, (slice(None),) * dim + (idx,), alpha * src)
    return out


CASES = [
    # -- nonzero ----------------------------------------------------------------------------------
    OpCase("nonzero", "floats", [arg(4, 5)], lambda fw, x: fw.nonzero(x > 0.5),
           lambda x: np.argwhere(x > 0.5), torch=lambda torch, x: torch.nonzero(x > 0.5),
           grad=False),
    OpCase("nonzero", "ints_3d", [value(np.array([[[0, 2], [3, 0]], [[0, 0], [1, 1]]]))],
           lambda fw, x: fw.tensor(x).nonzero(), lambda x: np.argwhere(x),
           torch=lambda torch, x: x.nonzero(), dtypes=("int64", "int32"), grad=False),
    OpCase("nonzero", "scalar", [value(np.array(2.5))], lambda fw, x: fw.tensor(x).nonzero(),
           lambda x: np.zeros((1, 0), np.int64), torch=lambda torch, x: x.nonzero(),
           dtypes=("float64",), grad=False),
    OpCase("nonzero", "as_tuple", [value(np.array([[0.0, 1.0], [2.0, 0.0]]))],
           lambda fw, x: fw.stack(fw.nonzero(fw.tensor(x), as_tuple=True)),
           lambda x: np.stack(np.nonzero(x)),
           torch=lambda torch, x: torch.stack(torch.nonzero(x, as_tuple=True)),
           dtypes=("float64",), grad=False),
    # -- masked_select, masked_scatter ------------------------------------------------------------
    OpCase("getitem", "masked_select", [arg(3, 4), mask(3, 4)], **same(
        lambda x, m: x.masked_select(m)), reference=lambda x, m: x[m]),
    OpCase("getitem", "masked_select_broadcast", [arg(3, 1), mask(2, 1, 4)], **same(
        lambda x, m: x.masked_select(m)),
        reference=lambda x, m: np.broadcast_to(x, (2, 3, 4))[np.broadcast_to(m, (2, 3, 4))]),
    OpCase("where", "masked_scatter", [arg(3, 4), mask(3, 4), arg(13)], **same(
        lambda x, m, s: x.masked_scatter(m, s)), reference=_masked_scatter),
    OpCase("where", "masked_scatter_broadcast", [arg(3, 4), mask(4), arg(3, 5)], **same(
        lambda x, m, s: x.masked_scatter(m, s)), reference=_masked_scatter),
    # -- take, take_along_dim ---------------------------------------------------------------------
    OpCase("getitem", "take", [arg(3, 4), value(np.array([[0, 11], [5, -1], [5, 3]]))],
           **same(lambda x, i: x.take(i)), reference=lambda x, i: x.reshape(-1)[i]),
    OpCase("gather", "take_along_dim", [arg(3, 4), index(3, 2, high=4)], **same(
        lambda x, i: x.take_along_dim(i, 1)),
        reference=lambda x, i: np.take_along_axis(x, i, 1)),
    OpCase("gather", "take_along_dim_broadcast", [arg(1, 4), index(3, 2, high=4)], **same(
        lambda x, i: x.take_along_dim(i, -1)),
        reference=lambda x, i: np.take_along_axis(np.broadcast_to(x, (3, 4)), i, 1)),
    OpCase("gather", "take_along_dim_flat", [arg(3, 4), index(5, high=12)], **same(
        lambda x, i: x.take_along_dim(i)), reference=lambda x, i: x.reshape(-1)[i]),
    # -- repeat_interleave ------------------------------------------------------------------------
    OpCase("index_select", "repeat_interleave_flat", [arg(2, 3)], **same(
        lambda x: x.repeat_interleave(3)), reference=lambda x: np.repeat(x, 3)),
    OpCase("index_select", "repeat_interleave_dim", [arg(2, 3)], **same(
        lambda x: x.repeat_interleave(2, -2)), reference=lambda x: np.repeat(x, 2, 0)),
    OpCase("index_select", "repeat_interleave_counts", [arg(2, 3), value(np.array([2, 0, 3]))],
           **same(lambda x, r: x.repeat_interleave(r, dim=1, output_size=5)),
           reference=lambda x, r: np.repeat(x, r, 1)),
    OpCase("scatter_add", "repeat_interleave_positions", [value(np.array([1, 0, 2, 3]))],
           lambda fw, r: fw.repeat_interleave(fw.tensor(r)),
           torch=lambda torch, r: torch.repeat_interleave(r),
           reference=lambda r: np.repeat(np.arange(4), r), dtypes=("int64",), grad=False),
    # -- index_add, index_copy, index_fill --------------------------------------------------------
    OpCase("index_backward", "index_add", [arg(3, 4), value(np.array([3, 0, 3])), arg(3, 3)],
           **same(lambda x, i, s: x.index_add(1, i, s, alpha=2.0)),
           reference=lambda x, i, s: _index_add(x, 1, i, s, 2.0)),
    OpCase("scatter", "index_copy", [arg(4, 3), value(np.array([2, 0])), arg(2, 3)],
           **same(lambda x, i, s: x.index_copy(0, i, s)),
           reference=lambda x, i, s: np.concatenate([s[1:2], x[1:2], s[0:1], x[3:]])),
    OpCase("index_write", "dim1_in_place",
           [arg(2, 5, 3, grad=False), value(np.array([3, 0])), arg(2, 2, 3, grad=False)],
           lambda fw, x, i, s: fw.ops.index_update.index_write(x.detach().clone(), 1, i, s),
           lambda x, i, s: np.stack([s[:, 1], x[:, 1], x[:, 2], s[:, 0], x[:, 4]], axis=1),
           torch=lambda torch, x, i, s: x.detach().clone().index_copy_(1, i, s), grad=False),
    OpCase("masked_fill", "index_fill", [arg(3, 4), value(np.array([1, -1]))],
           **same(lambda x, i: x.index_fill(1, i, -2.0)),
           reference=lambda x, i: np.where(np.isin(np.arange(4), [1, 3]), -2.0, x).astype(
               x.dtype)),
    # -- scatter_reduce ---------------------------------------------------------------------------
    *[OpCase("scatter_reduce", f"{reduce}_{'self' if keep else 'noself'}",
             [arg(3, 4), value(_INDEX), arg(3, 4, low=0.5)], **same(
                 lambda x, i, s, r=reduce, k=keep: x.scatter_reduce(0, i, s, r,
                                                                     include_self=k)),
             reference=lambda x, i, s, r=reduce, k=keep: _scatter_reduce(x, 0, i, s, r, k))
      for reduce in ("sum", "prod", "mean", "amax", "amin") for keep in (True, False)],
    OpCase("scatter_reduce", "prod_zeros",
           [value(np.array([[0.0, 2.0], [3.0, 1.5]])), value(np.array([[0, 0], [0, 1], [1, 1]])),
            value(np.array([[2.0, 0.0], [0.0, 3.0], [0.5, 0.0]]))],
           lambda fw, x, i, s: fw.tensor(x, requires_grad=True).scatter_reduce(
               0, fw.tensor(i), fw.tensor(s, requires_grad=True), "prod"),
           lambda x, i, s: _scatter_reduce(x, 0, i, s, "prod"), dtypes=("float64",),
           grad=False),
    OpCase("scatter_reduce", "amax_ties", [value(np.array([[1.0, 2.0], [0.0, 5.0]])),
                                           value(np.array([[0, 1], [0, 1]])),
                                           value(np.array([[1.0, 5.0], [1.0, 0.0]]))],
           lambda fw, x, i, s: fw.tensor(x).scatter_reduce(0, fw.tensor(i), fw.tensor(s),
                                                           "amax"),
           lambda x, i, s: _scatter_reduce(x, 0, i, s, "amax"), dtypes=("float64",),
           grad=False),
    OpCase("scatter_reduce", "int_mean_floors", [value(np.array([5, -5, 5]))],
           lambda fw, x: fw.tensor(x).scatter_reduce(0, fw.tensor([0, 0, 1]),
                                                     fw.tensor([2, 3, -4]), "mean"),
           lambda x: np.array([3, -5, 5]),  # (5 + 2 + 3) // 3 and (-5 - 4) // 2
           torch=lambda torch, x: x.scatter_reduce(0, torch.tensor([0, 0, 1]),
                                                   torch.tensor([2, 3, -4]), "mean"),
           dtypes=("int64",), grad=False),
    OpCase("scatter_reduce", "dim1_src_larger", [arg(3, 4), index(3, 2, high=4), arg(3, 5)],
           lambda fw, x, i, s: x.scatter_reduce(1, i, s, "amin"),
           lambda x, i, s: _scatter_reduce(x, 1, i, s[:, :2], "amin")),
]
