"""Cases for :mod:`fw_core.ops.diagonals`, :mod:`fw_core.ops.windows` and
:mod:`fw_core.ops.reinterpret`: diagonals read and written (offsets, batches, rectangles),
diag/trace, triangle indices, sliding windows, rot90, meshgrid and bit views."""

import numpy as np

from fw_core.testing.conformance import OpCase, arg, value


def same(call):
    """``fn`` and ``torch`` from one call both libraries spell alike."""
    return {"fn": lambda fw, *xs: call(*xs), "torch": lambda torch, *xs: call(*xs)}


def _embed(x, offset=0):
    n = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n), x.dtype)
    rows = np.arange(x.shape[-1]) + max(0, -offset)
    out[..., rows, rows + offset] = x
    return out


def _unfold(x, dim, size, step):
    dim %= x.ndim
    count = (x.shape[dim] - size) // step + 1
    table = np.arange(count)[:, None] * step + np.arange(size)
    return np.moveaxis(np.take(x, table, axis=dim), dim + 1, -1)


def _triangle(fn, row, col, offset):
    return lambda torch: getattr(torch, fn)(row, col, offset)


CASES = [
    # -- diagonal, diag_embed, diag, trace --------------------------------------------------------
    *[OpCase("diagonal", f"offset{o}_{r}x{c}", [arg(r, c)], **same(lambda x, o=o: x.diagonal(o)),
             reference=lambda x, o=o: np.diagonal(x, o).copy())
      for o, r, c in ((0, 5, 5), (0, 3, 4), (0, 4, 3), (1, 5, 5), (-1, 5, 5), (2, 3, 5),
                      (7, 3, 3))],
    OpCase("diagonal", "batched_dims", [arg(2, 3, 4, 5)],
           **same(lambda x: x.diagonal(1, dim1=-1, dim2=1)),
           reference=lambda x: np.diagonal(x, 1, 3, 1).copy()),
    OpCase("diagonal", "ints", [arg(4, 4)], **same(lambda x: x.diagonal(-2)),
           reference=lambda x: np.diagonal(x, -2).copy(), dtypes=("int64", "int32", "bool")),
    OpCase("diagonal", "diag_matrix", [arg(3, 4)], **same(lambda x: x.diag(1)),
           reference=lambda x: np.diag(x, 1)),
    OpCase("diagonal", "trace", [arg(4, 3)], **same(lambda x: x.trace()),
           reference=lambda x: np.trace(x)),
    OpCase("diag_embed", "vector", [arg(4)], **same(lambda x: x.diag()),
           reference=lambda x: np.diag(x)),
    OpCase("diag_embed", "vector_offset", [arg(3)], **same(lambda x: x.diag(-2)),
           reference=lambda x: np.diag(x, -2)),
    OpCase("diag_embed", "batch", [arg(2, 3)], **same(lambda x: x.diag_embed(1)),
           reference=lambda x: _embed(x, 1)),
    OpCase("diag_embed", "new_dims_first", [arg(2, 3)], **same(lambda x: x.diag_embed(0, 0, 2)),
           reference=lambda x: np.moveaxis(_embed(x), (1, 2), (0, 2))),
    *[OpCase(fn, f"{row}x{col}_offset{offset}", [],
             lambda fw, f=fn, r=row, c=col, o=offset: getattr(fw, f)(r, c, o),
             lambda f=fn, r=row, c=col, o=offset: np.stack(getattr(np, f)(r, o, c)),
             torch=_triangle(fn, row, col, offset), dtypes=("int64",), grad=False)
      for fn in ("tril_indices", "triu_indices")
      for row, col, offset in ((3, 3, 0), (4, 6, 1), (5, 2, -2), (3, 3, -5), (0, 4, 0))],
    # -- unfold, rot90, meshgrid ------------------------------------------------------------------
    *[OpCase("unfold", f"{'x'.join(map(str, shape))}_{dim}_{size}_{step}", [arg(*shape)],
             **same(lambda x, a=(dim, size, step): x.unfold(*a)),
             reference=lambda x, a=(dim, size, step): _unfold(x, *a))
      for shape, dim, size, step in (((8,), 0, 2, 1), ((8,), 0, 7, 3), ((3, 3, 3), 2, 2, 8),
                                     ((3, 3, 3), 1, 0, 8), ((2, 3, 3, 5), -1, 2, 2),
                                     ((4, 6), 0, 3, 1))],
    OpCase("unfold_backward", "overlaps_accumulate", [arg(3, 4, 2)],
           lambda fw, g: fw.ops.apply(fw.ops.get("unfold_backward"), (g,), {
               "shape": (3, 5), "dim": 1, "size": 2, "step": 1}),
           lambda g: np.pad(g[..., 0], ((0, 0), (0, 1))) + np.pad(g[..., 1], ((0, 0), (1, 0))),
           torch=lambda torch, g: torch.ops.aten.unfold_backward(g, (3, 5), 1, 2, 1)),
    *[OpCase("flip", f"rot90_k{k}", [arg(2, 3, 4)], **same(lambda x, k=k: x.rot90(k, (2, 0))),
             reference=lambda x, k=k: np.rot90(x, k, (2, 0)).copy())
      for k in (1, 2, 3, -1)],
    OpCase("broadcast_to", "meshgrid_ij", [arg(3), arg(4), arg(2)],
           lambda fw, *xs: fw.stack(fw.meshgrid(*xs, indexing="ij")),
           lambda *xs: np.stack(np.meshgrid(*xs, indexing="ij")),
           torch=lambda torch, *xs: torch.stack(torch.meshgrid(*xs, indexing="ij"))),
    OpCase("broadcast_to", "meshgrid_xy", [arg(3), arg(4)],
           lambda fw, *xs: fw.stack(fw.meshgrid(list(xs), indexing="xy")),
           lambda *xs: np.stack(np.meshgrid(*xs, indexing="xy")),
           torch=lambda torch, *xs: torch.stack(torch.meshgrid(list(xs), indexing="xy"))),
    # -- view(dtype) ------------------------------------------------------------------------------
    OpCase("view_dtype", "same_size", [arg(3, 3)],
           lambda fw, x: x.view(fw.int32), lambda x: x.view(np.int32),
           torch=lambda torch, x: x.view(torch.int32), dtypes=("float32",), grad=False),
    OpCase("view_dtype", "narrower", [arg(2, 3)],
           lambda fw, x: x.contiguous().view(fw.int16), lambda x: x.view(np.int16),
           torch=lambda torch, x: x.contiguous().view(torch.int16), dtypes=("float32", "float64"),
           grad=False),
    OpCase("view_dtype", "wider", [value(np.arange(-8, 8, dtype=np.int8).reshape(2, 8))],
           lambda fw, x: fw.tensor(x).contiguous().view(fw.float16),
           lambda x: x.view(np.float16),
           torch=lambda torch, x: x.view(torch.float16), dtypes=("int8",), grad=False),
]
