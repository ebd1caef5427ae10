"""Shape and indexing op cases: views, joins, splits, indexing, gather/scatter, pad and friends.

Most calls read the same on an fw tensor and a torch tensor, so :func:`same` builds both the
fw call and the PyTorch call from one lambda.
"""

import numpy as np

from fw_core.testing.conformance import OpCase, arg, index, mask, value

ALL_DTYPES = ("float32", "float64", "float16", "int64", "int32", "bool")
FLOATS = ("float32", "float64", "float16")


def same(call):
    """``fn`` and ``torch`` from one call written with methods both libraries share."""
    return {"fn": lambda fw, *xs: call(*xs), "torch": lambda torch, *xs: call(*xs)}


def case(op, name, inputs, call, reference, dtypes=("float32", "float64"), **kw):
    return OpCase(op, name, inputs, reference=reference, dtypes=dtypes, **same(call), **kw)


def _torch_pad(pad, mode="constant", value=None):
    def call(torch, x):
        extra = {} if value is None else {"value": value}
        return torch.nn.functional.pad(x, pad, mode=mode, **extra)

    return call


def _fw_pad(pad, mode="constant", value=None):
    return lambda fw, x: fw.pad(x, pad, mode=mode, value=value)


def _put(x, dim, idx, src):
    out = x.copy()
    region = tuple(slice(0, s) for s in idx.shape)
    np.put_along_axis(out[tuple(slice(None) if d == dim else r for d, r in enumerate(region))],
                      idx, src[region], axis=dim)
    return out


def _scatter_add(x, dim, idx, src):
    out = x.copy()
    fancy = tuple(idx if d == dim else np.arange(n).reshape(
        (1,) * d + (n,) + (1,) * (idx.ndim - d - 1)) for d, n in enumerate(idx.shape))
    np.add.at(out, fancy, src[tuple(slice(0, s) for s in idx.shape)])
    return out


def _pieces(parts, dim):
    """Pieces weighted 1, 2, 3, ... and joined again: every piece's gradient path is checked."""
    return np.concatenate([p * (i + 1) for i, p in enumerate(parts)], dim)


def _fw_pieces(fw, parts, dim):
    return fw.cat([p * (i + 1.0) for i, p in enumerate(parts)], dim)


_SCATTER_INDEX = np.array([[0, 1, 2, 0], [2, 0, 1, 1]])  # no repeats within a column
_REFLECT = ((0, 0), (2, 2))

CASES = [
    # -- reshape and the ops built on it ----------------------------------------------------------
    case("reshape", "infer", [arg(2, 3, 4)], lambda x: x.reshape(4, -1),
         lambda x: x.reshape(4, -1), dtypes=ALL_DTYPES),
    case("reshape", "tuple", [arg(2, 3, 4)], lambda x: x.reshape((3, 8)),
         lambda x: x.reshape(3, 8)),
    case("reshape", "scalar_to_1d", [arg()], lambda x: x.reshape(1), lambda x: x.reshape(1)),
    case("reshape", "to_scalar", [arg(1, 1)], lambda x: x.reshape(()), lambda x: x.reshape(())),
    case("reshape", "empty", [arg(0, 3)], lambda x: x.reshape(3, 0, 1),
         lambda x: x.reshape(3, 0, 1)),
    case("reshape", "view_split_last", [arg(2, 3, 4)], lambda x: x.view(2, 3, 2, 2),
         lambda x: x.reshape(2, 3, 2, 2), dtypes=ALL_DTYPES),
    case("reshape", "view_as", [arg(2, 6), arg(2, 3, 2, grad=False)],
         lambda x, y: x.view_as(y), lambda x, y: x.reshape(2, 3, 2)),
    case("reshape", "flatten_middle", [arg(2, 3, 4, 5)], lambda x: x.flatten(1, 2),
         lambda x: x.reshape(2, 12, 5)),
    case("reshape", "flatten_all", [arg(2, 3)], lambda x: x.flatten(), lambda x: x.reshape(-1)),
    case("reshape", "flatten_scalar", [arg()], lambda x: x.flatten(), lambda x: x.reshape(1)),
    case("reshape", "unflatten", [arg(2, 12)], lambda x: x.unflatten(1, (3, -1)),
         lambda x: x.reshape(2, 3, 4)),
    case("reshape", "squeeze_all", [arg(2, 1, 3, 1)], lambda x: x.squeeze(),
         lambda x: x.reshape(2, 3), dtypes=ALL_DTYPES),
    case("reshape", "squeeze_dim", [arg(2, 1, 3, 1)], lambda x: x.squeeze(-1),
         lambda x: x.reshape(2, 1, 3)),
    case("reshape", "squeeze_dims", [arg(2, 1, 3, 1)], lambda x: x.squeeze((1, 3)),
         lambda x: x.reshape(2, 3)),
    case("reshape", "squeeze_not_one", [arg(2, 3)], lambda x: x.squeeze(0),
         lambda x: x),
    case("reshape", "unsqueeze_last", [arg(2, 3)], lambda x: x.unsqueeze(-1),
         lambda x: x[..., None], dtypes=ALL_DTYPES),
    case("reshape", "unsqueeze_scalar", [arg()], lambda x: x.unsqueeze(0), lambda x: x[None]),
    # -- permute and friends ----------------------------------------------------------------------
    case("permute", "dims", [arg(2, 3, 4)], lambda x: x.permute(2, 0, 1),
         lambda x: x.transpose(2, 0, 1), dtypes=ALL_DTYPES),
    case("permute", "negative_dims", [arg(2, 3, 4)], lambda x: x.permute((-1, -3, -2)),
         lambda x: x.transpose(2, 0, 1)),
    case("permute", "transpose", [arg(2, 3, 4)], lambda x: x.transpose(0, 2),
         lambda x: x.swapaxes(0, 2), dtypes=ALL_DTYPES),
    case("permute", "swapaxes", [arg(3, 4)], lambda x: x.swapaxes(-1, 0), lambda x: x.T),
    case("permute", "T", [arg(2, 3, 4)], lambda x: x.permute(2, 1, 0), lambda x: x.T),
    case("permute", "T_matrix", [arg(3, 5)], lambda x: x.T, lambda x: x.T),
    case("permute", "mT", [arg(2, 3, 4)], lambda x: x.mT, lambda x: x.swapaxes(-1, -2)),
    case("permute", "t", [arg(3, 4)], lambda x: x.t(), lambda x: x.T),
    case("permute", "movedim", [arg(2, 3, 4)], lambda x: x.movedim(0, -1),
         lambda x: np.moveaxis(x, 0, -1)),
    case("permute", "movedim_many", [arg(2, 3, 4, 5)], lambda x: x.movedim((0, 1), (3, 0)),
         lambda x: np.moveaxis(x, (0, 1), (3, 0))),
    case("permute", "vector", [arg(5)], lambda x: x.permute(0), lambda x: x),
    case("permute", "empty", [arg(0, 3)], lambda x: x.transpose(0, 1), lambda x: x.T),
    # -- expand (a broadcast_to view), contiguous (a clone when needed) ---------------------------
    case("broadcast_to", "expand", [arg(3, 1)], lambda x: x.expand(2, 3, 4),
         lambda x: np.broadcast_to(x, (2, 3, 4)), dtypes=ALL_DTYPES),
    case("broadcast_to", "expand_keep", [arg(3, 1)], lambda x: x.expand(-1, 5),
         lambda x: np.broadcast_to(x, (3, 5))),
    case("broadcast_to", "expand_scalar", [arg()], lambda x: x.expand(3),
         lambda x: np.broadcast_to(x, (3,))),
    case("broadcast_to", "expand_as", [arg(1, 4), arg(3, 4, grad=False)],
         lambda x, y: x.expand_as(y), lambda x, y: np.broadcast_to(x, (3, 4))),
    case("clone", "contiguous", [arg(3, 4)], lambda x: x.mT.contiguous(), lambda x: x.T),
    # -- repeat, tile -----------------------------------------------------------------------------
    case("repeat", "lead_dim", [arg(2, 3)], lambda x: x.repeat(2, 1, 3),
         lambda x: np.tile(x, (2, 1, 3)), dtypes=ALL_DTYPES),
    case("repeat", "same_rank", [arg(2, 3)], lambda x: x.repeat(2, 2),
         lambda x: np.tile(x, (2, 2))),
    case("repeat", "scalar", [arg()], lambda x: x.repeat(3), lambda x: np.tile(x, 3)),
    case("repeat", "zero", [arg(2, 3)], lambda x: x.repeat(0, 2), lambda x: np.tile(x, (0, 2))),
    case("repeat", "tile_short", [arg(2, 3)], lambda x: x.tile((2,)),
         lambda x: np.tile(x, (1, 2))),
    case("repeat", "tile_long", [arg(3)], lambda x: x.tile((2, 2)),
         lambda x: np.tile(x, (2, 2))),
    # -- cat, stack -------------------------------------------------------------------------------
    OpCase("cat", "dim0", [arg(2, 3), arg(4, 3)], lambda fw, a, b: fw.cat([a, b]),
           lambda a, b: np.concatenate([a, b]), torch=lambda torch, a, b: torch.cat([a, b]),
           dtypes=ALL_DTYPES),
    OpCase("cat", "last_dim_three", [arg(2, 3), arg(2, 1), arg(2, 2)],
           lambda fw, a, b, c: fw.cat((a, b, c), dim=-1),
           lambda a, b, c: np.concatenate([a, b, c], -1),
           torch=lambda torch, a, b, c: torch.cat((a, b, c), dim=-1)),
    OpCase("cat", "with_empty", [arg(0, 3), arg(2, 3)], lambda fw, a, b: fw.concatenate([a, b]),
           lambda a, b: np.concatenate([a, b]), torch=lambda torch, a, b: torch.cat([a, b])),
    OpCase("cat", "single", [arg(2, 3)], lambda fw, a: fw.cat([a], 1), lambda a: a.copy(),
           torch=lambda torch, a: torch.cat([a], 1)),
    OpCase("cat", "promotes", [arg(2, 2), value(np.array([[1, 2]], dtype=np.int64))],
           lambda fw, a, b: fw.cat([a, b]), lambda a, b: np.concatenate([a, b.astype(a.dtype)]),
           torch=lambda torch, a, b: torch.cat([a, b])),
    OpCase("stack", "dim0", [arg(2, 3), arg(2, 3)], lambda fw, a, b: fw.stack([a, b]),
           lambda a, b: np.stack([a, b]), torch=lambda torch, a, b: torch.stack([a, b]),
           dtypes=ALL_DTYPES),
    OpCase("stack", "last_dim", [arg(2, 3), arg(2, 3), arg(2, 3)],
           lambda fw, a, b, c: fw.stack([a, b, c], -1), lambda a, b, c: np.stack([a, b, c], -1),
           torch=lambda torch, a, b, c: torch.stack([a, b, c], -1)),
    OpCase("stack", "scalars", [arg(), arg()], lambda fw, a, b: fw.stack([a, b]),
           lambda a, b: np.stack([a, b]), torch=lambda torch, a, b: torch.stack([a, b])),
    OpCase("stack", "empty", [arg(0, 2), arg(0, 2)], lambda fw, a, b: fw.stack([a, b], 1),
           lambda a, b: np.stack([a, b], 1), torch=lambda torch, a, b: torch.stack([a, b], 1)),
    # -- split, chunk, unbind, narrow, select (views: getitem) ------------------------------------
    case("getitem", "split_piece", [arg(2, 5)], lambda x: x.split(2, 1)[2],
         lambda x: x[:, 4:], dtypes=ALL_DTYPES),
    OpCase("getitem", "split_sizes", [arg(2, 4)],
           lambda fw, x: _fw_pieces(fw, x.split([1, 3], 1), 1),
           lambda x: _pieces(np.split(x, [1], 1), 1),
           torch=lambda torch, x: _fw_pieces(torch, x.split([1, 3], 1), 1)),
    OpCase("getitem", "split_size", [arg(5, 2)],
           lambda fw, x: _fw_pieces(fw, fw.split(x, 2), 0),
           lambda x: _pieces(np.split(x, [2, 4]), 0),
           torch=lambda torch, x: _fw_pieces(torch, torch.split(x, 2), 0)),
    OpCase("getitem", "chunk", [arg(3, 5)], lambda fw, x: _fw_pieces(fw, x.chunk(3, -1), -1),
           lambda x: _pieces(np.split(x, [2, 4], -1), -1),
           torch=lambda torch, x: _fw_pieces(torch, x.chunk(3, -1), -1)),
    OpCase("getitem", "unbind", [arg(3, 2)], lambda fw, x: _fw_pieces(fw, x.unbind(0), 0),
           lambda x: np.concatenate([x[i] * (i + 1) for i in range(3)]),
           torch=lambda torch, x: _fw_pieces(torch, x.unbind(0), 0)),
    case("getitem", "unbind_piece", [arg(3, 4)], lambda x: x.unbind(1)[2], lambda x: x[:, 2]),
    case("getitem", "narrow", [arg(3, 5)], lambda x: x.narrow(1, 1, 3), lambda x: x[:, 1:4]),
    case("getitem", "select", [arg(3, 5)], lambda x: x.select(-1, -2), lambda x: x[:, -2]),
    # -- indexing ---------------------------------------------------------------------------------
    case("getitem", "int", [arg(3, 4)], lambda x: x[1], lambda x: x[1], dtypes=ALL_DTYPES),
    case("getitem", "negative_int", [arg(3, 4)], lambda x: x[-1, 2], lambda x: x[-1, 2]),
    case("getitem", "slices", [arg(4, 5)], lambda x: x[1:3, ::2], lambda x: x[1:3, ::2],
         dtypes=ALL_DTYPES),
    case("getitem", "negative_slice", [arg(4, 5)], lambda x: x[:, -2:], lambda x: x[:, -2:]),
    case("getitem", "empty_slice", [arg(4, 5)], lambda x: x[2:2], lambda x: x[2:2]),
    case("getitem", "none_ellipsis", [arg(2, 3, 4)], lambda x: x[None, ..., 1],
         lambda x: x[None, ..., 1]),
    case("getitem", "scalar_none", [arg()], lambda x: x[None], lambda x: x[None]),
    case("getitem", "scalar_ellipsis", [arg()], lambda x: x[...], lambda x: x[...]),
    case("getitem", "empty_input", [arg(0, 3)], lambda x: x[:, 1], lambda x: x[:, 1]),
    case("getitem", "int_tensor", [arg(3, 4), index(5, high=3)], lambda x, i: x[i],
         lambda x, i: x[i], dtypes=ALL_DTYPES),
    case("getitem", "int_tensor_2d", [arg(3, 4), index(2, 2, high=4)], lambda x, i: x[:, i],
         lambda x, i: x[:, i]),
    case("getitem", "list_repeats", [arg(3, 4)], lambda x: x[[0, 2, 2]], lambda x: x[[0, 2, 2]]),
    case("getitem", "two_arrays", [arg(3, 4, 5)], lambda x: x[[0, 1], :, [1, 2]],
         lambda x: x[[0, 1], :, [1, 2]]),
    case("getitem", "adjacent_arrays", [arg(3, 4, 5)], lambda x: x[:, [0, 3], [1, 2]],
         lambda x: x[:, [0, 3], [1, 2]]),
    case("getitem", "int_then_array", [arg(3, 4, 5)], lambda x: x[0, :, [1, 2, 4]],
         lambda x: x[0][:, [1, 2, 4]]),
    case("getitem", "slice_and_array", [arg(3, 4)], lambda x: x[1:, [0, 2]],
         lambda x: x[1:, [0, 2]]),
    case("getitem", "mask", [arg(3, 4), mask(3, 4)], lambda x, m: x[m], lambda x, m: x[m],
         dtypes=ALL_DTYPES),
    case("getitem", "mask_rows", [arg(3, 4), mask(3)], lambda x, m: x[m], lambda x, m: x[m]),
    case("getitem", "mask_after_slice", [arg(2, 3, 4), mask(3)], lambda x, m: x[:, m],
         lambda x, m: x[:, m]),
    case("getitem", "scalar_tensor_index", [arg(3, 4), value(np.array(2))], lambda x, i: x[i],
         lambda x, i: x[int(i)]),
    case("getitem", "true", [arg(2, 3)], lambda x: x[True], lambda x: x[None]),
    # -- index_backward (the gradient of getitem; its own gradient is getitem) --------------------
    OpCase("index_backward", "accumulates", [arg(5, 4)],
           lambda fw, g: fw.ops.apply(fw.ops.get("index_backward"), (g,), {
               "shape": (3, 4), "index": (np.array([0, 2, 0, 1, 0]), Ellipsis)}),
           lambda g: _scatter_add(np.zeros((3, 4), g.dtype), 0,
                                  np.broadcast_to(np.array([[0], [2], [0], [1], [0]]), (5, 4)), g)),
    OpCase("index_backward", "basic", [arg(2, 2)],
           lambda fw, g: fw.ops.apply(fw.ops.get("index_backward"), (g,), {
               "shape": (3, 4), "index": (slice(1, 3), slice(0, 4, 2), Ellipsis)}),
           lambda g: np.pad(g.repeat(2, 1) * np.array([1, 0, 1, 0], g.dtype), ((1, 0), (0, 0)))),
    # -- gather, scatter, scatter_add, index_select -----------------------------------------------
    case("gather", "dim1", [arg(3, 4), index(3, 4, high=4)], lambda x, i: x.gather(1, i),
         lambda x, i: np.take_along_axis(x, i, 1), dtypes=ALL_DTYPES),
    case("gather", "smaller_index", [arg(3, 4), index(2, 3, high=3)],
         lambda x, i: x.gather(0, i), lambda x, i: np.take_along_axis(x[:, :3], i, 0)),
    case("gather", "negative_dim", [arg(2, 3, 4), index(2, 3, 6, high=4)],
         lambda x, i: x.gather(-1, i), lambda x, i: np.take_along_axis(x, i, -1)),
    case("gather", "scalar", [arg(), value(np.array(0))], lambda x, i: x.gather(0, i),
         lambda x, i: x),
    case("scatter", "src", [arg(3, 4), value(_SCATTER_INDEX), arg(2, 4)],
         lambda x, i, s: x.scatter(0, i, s), lambda x, i, s: _put(x, 0, i, s),
         dtypes=ALL_DTYPES),
    # PyTorch's own backward rejects a src larger than the index, so no torch= for these two
    OpCase("scatter", "src_larger", [arg(3, 4), value(_SCATTER_INDEX), arg(3, 5)],
           lambda fw, x, i, s: x.scatter(0, i, s), lambda x, i, s: _put(x, 0, i, s)),
    case("scatter", "value", [arg(4, 3), value(_SCATTER_INDEX.T.copy())],
         lambda x, i: x.scatter(1, i, 2.5), lambda x, i: _put(x, 1, i, np.full(i.shape, 2.5))),
    case("scatter_add", "repeats", [arg(3, 3), index(4, 3, high=3), arg(4, 3)],
         lambda x, i, s: x.scatter_add(0, i, s), lambda x, i, s: _scatter_add(x, 0, i, s),
         dtypes=ALL_DTYPES[:5]),
    OpCase("scatter_add", "dim1_src_larger", [arg(2, 5), index(2, 3, high=5), arg(2, 4)],
           lambda fw, x, i, s: x.scatter_add(1, i, s), lambda x, i, s: _scatter_add(x, 1, i, s)),
    case("index_select", "dim1", [arg(3, 4), index(5, high=4)],
         lambda x, i: x.index_select(1, i), lambda x, i: x[:, i], dtypes=ALL_DTYPES),
    case("index_select", "dim0_repeats", [arg(3, 4), value(np.array([2, 0, 2]))],
         lambda x, i: x.index_select(0, i), lambda x, i: x[i]),
    case("index_select", "scalar_index", [arg(3, 4), value(np.array(1))],
         lambda x, i: x.index_select(-1, i), lambda x, i: x[:, [int(i)]]),
    case("index_select", "empty_index", [arg(3, 4), value(np.zeros(0, np.int64))],
         lambda x, i: x.index_select(0, i), lambda x, i: x[:0]),
    # -- masked_fill ------------------------------------------------------------------------------
    case("masked_fill", "same_shape", [arg(3, 4), mask(3, 4)],
         lambda x, m: x.masked_fill(m, -1.0), lambda x, m: np.where(m, np.array(-1, x.dtype), x),
         dtypes=FLOATS),
    case("masked_fill", "broadcast_mask", [arg(3, 4), mask(4)],
         lambda x, m: x.masked_fill(m, 0.5), lambda x, m: np.where(m, np.array(0.5, x.dtype), x)),
    case("masked_fill", "int", [arg(3, 4), mask(3, 1)], lambda x, m: x.masked_fill(m, 7),
         lambda x, m: np.where(m, np.array(7, x.dtype), x), dtypes=("int64", "int32")),
    case("where", "masked_fill_tensor_value", [arg(3, 4), mask(3, 4), arg()],
         lambda x, m, v: x.masked_fill(m, v), lambda x, m, v: np.where(m, v, x)),
    # -- pad --------------------------------------------------------------------------------------
    OpCase("pad", "constant", [arg(2, 3)], _fw_pad((1, 2)),
           lambda x: np.pad(x, ((0, 0), (1, 2))), torch=_torch_pad((1, 2)), dtypes=ALL_DTYPES),
    OpCase("pad", "constant_value_two_dims", [arg(2, 3)], _fw_pad((1, 1, 2, 0), value=0.5),
           lambda x: np.pad(x, ((2, 0), (1, 1)), constant_values=0.5),
           torch=_torch_pad((1, 1, 2, 0), value=0.5)),
    OpCase("pad", "constant_crop", [arg(3, 4)], _fw_pad((-1, 2)),
           lambda x: np.pad(x[:, 1:], ((0, 0), (0, 2))), torch=_torch_pad((-1, 2))),
    OpCase("pad", "constant_empty", [arg(0, 3)], _fw_pad((1, 1)),
           lambda x: np.pad(x, ((0, 0), (1, 1))), torch=_torch_pad((1, 1))),
    OpCase("pad", "reflect", [arg(2, 5)], _fw_pad((2, 3), "reflect"),
           lambda x: np.pad(x, ((0, 0), (2, 3)), mode="reflect"),
           torch=_torch_pad((2, 3), "reflect"), dtypes=FLOATS),
    OpCase("pad", "reflect_2d", [arg(1, 3, 4)], _fw_pad((1, 2, 2, 1), "reflect"),
           lambda x: np.pad(x, ((0, 0), (2, 1), (1, 2)), mode="reflect"),
           torch=_torch_pad((1, 2, 2, 1), "reflect")),
    OpCase("pad", "replicate", [arg(2, 3, 4)], _fw_pad((1, 2, 2, 1), "replicate"),
           lambda x: np.pad(x, ((0, 0), (2, 1), (1, 2)), mode="edge"),
           torch=_torch_pad((1, 2, 2, 1), "replicate")),
    OpCase("pad", "circular", [arg(1, 2, 5)], _fw_pad((2, 3), "circular"),
           lambda x: np.pad(x, ((0, 0), (0, 0), (2, 3)), mode="wrap"),
           torch=_torch_pad((2, 3), "circular")),
    OpCase("pad_backward", "reflect", [arg(2, 9)],
           lambda fw, g: fw.ops.apply(fw.ops.get("pad_backward"), (g,), {
               "pad_width": _REFLECT, "mode": "reflect", "shape": (2, 5)}),
           lambda g: _scatter_add(np.zeros((2, 5), g.dtype), 1, np.broadcast_to(
               np.array([2, 1, 0, 1, 2, 3, 4, 3, 2]), (2, 9)), g)),
    OpCase("pad_backward", "replicate", [arg(3, 4)],
           lambda fw, g: fw.ops.apply(fw.ops.get("pad_backward"), (g,), {
               "pad_width": ((1, 0), (1, 1)), "mode": "replicate", "shape": (2, 2)}),
           lambda g: np.array([[g[:2, :2].sum(), g[:2, 2:].sum()],
                               [g[2, :2].sum(), g[2, 2:].sum()]], g.dtype)),
    OpCase("pad_backward", "circular", [arg(2, 6)],
           lambda fw, g: fw.ops.apply(fw.ops.get("pad_backward"), (g,), {
               "pad_width": ((0, 0), (1, 2)), "mode": "circular", "shape": (2, 3)}),
           lambda g: _scatter_add(np.zeros((2, 3), g.dtype), 1, np.broadcast_to(
               np.array([2, 0, 1, 2, 0, 1]), (2, 6)), g)),
    # -- flip, roll, tril, triu -------------------------------------------------------------------
    case("flip", "two_dims", [arg(2, 3, 4)], lambda x: x.flip(0, 2),
         lambda x: x[::-1, :, ::-1], dtypes=ALL_DTYPES),
    case("flip", "last", [arg(3, 4)], lambda x: x.flip(-1), lambda x: x[:, ::-1]),
    case("flip", "scalar", [arg()], lambda x: x.flip(()), lambda x: x),
    case("flip", "empty", [arg(0, 3)], lambda x: x.flip(1), lambda x: x),
    case("roll", "one_dim", [arg(3, 4)], lambda x: x.roll(1, 0), lambda x: np.roll(x, 1, 0),
         dtypes=ALL_DTYPES),
    case("roll", "two_dims", [arg(3, 4)], lambda x: x.roll((1, -2), (0, 1)),
         lambda x: np.roll(x, (1, -2), (0, 1))),
    case("roll", "flat", [arg(2, 3)], lambda x: x.roll(5), lambda x: np.roll(x, 5)),
    case("tril", "default", [arg(4, 5)], lambda x: x.tril(), np.tril, dtypes=ALL_DTYPES),
    case("tril", "batched_k", [arg(2, 3, 3)], lambda x: x.tril(-1), lambda x: np.tril(x, -1)),
    case("triu", "default", [arg(4, 5)], lambda x: x.triu(), np.triu, dtypes=ALL_DTYPES),
    case("triu", "batched_k", [arg(2, 3, 4)], lambda x: x.triu(1), lambda x: np.triu(x, 1)),
    # -- one_hot ----------------------------------------------------------------------------------
    OpCase("one_hot", "classes", [index(5, high=4)], lambda fw, i: fw.one_hot(i, 4),
           lambda i: np.eye(4, dtype=np.int64)[i],
           torch=lambda torch, i: torch.nn.functional.one_hot(i, 4), dtypes=("int64",),
           grad=False),
    OpCase("one_hot", "inferred_2d", [index(2, 3, high=5)], lambda fw, i: fw.one_hot(i),
           lambda i: np.eye(i.max() + 1, dtype=np.int64)[i],
           torch=lambda torch, i: torch.nn.functional.one_hot(i), dtypes=("int64",), grad=False),
    OpCase("one_hot", "empty", [index(0, high=3)], lambda fw, i: fw.one_hot(i, 3),
           lambda i: np.zeros((0, 3), np.int64),
           torch=lambda torch, i: torch.nn.functional.one_hot(i, 3), dtypes=("int64",),
           grad=False),
]
