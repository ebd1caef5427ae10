"""Shape and indexing kernels: NumPy views where the layout allows, one vectorised call otherwise.

Index arrays arrive already normalised by ``fw_core.ops.shape`` (bool masks turned into integer
positions, a trailing Ellipsis so that a fully indexed element stays a 0-d array). Values out of
range surface as IndexOutOfRangeErrors naming the op; NumPy's own IndexError would only
say "axis".
"""

from __future__ import annotations

from fw_core.errors import IndexOutOfRangeError

_NUMPY_PAD_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
                   "circular": "wrap"}


def add_at(xp):
    """``fn(target, index, values)``: unbuffered ``target[index] += values``, so repeated
    positions accumulate. The one place a namespace without ``ufunc.at`` (CuPy before v13 has
    ``cupyx.scatter_add`` instead) swaps in its own."""
    return xp.add.at


def _leading(shape, dim=None):
    """Slices keeping the first ``shape[d]`` entries of each dimension (all of ``dim``)."""
    return tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(shape))


def along_axis(xp, index, dim):
    """The fancy index that ``take_along_axis`` builds: ``index`` on ``dim``, aranges on the
    other dims (sized by index, so index may be smaller than the array there)."""
    ndim = index.ndim
    return tuple(index if d == dim else xp.arange(n).reshape(
        (1,) * d + (n,) + (1,) * (ndim - d - 1)) for d, n in enumerate(index.shape))


def _indexed(kernel):
    """``kernel(x, index, ..., dim)`` that also takes 0-d tensors (as 1-element vectors: NumPy's
    along-axis helpers need an axis) and reports out-of-range indices as IndexOutOfRangeErrors."""
    op = kernel.__name__

    def run(x, index, *rest, dim, **attrs):
        if not x.ndim:
            vectors = (a.reshape(1) for a in rest)
            return run(x.reshape(1), index.reshape(1), *vectors, dim=0, **attrs).reshape(())
        try:
            return kernel(x, index, *rest, dim, **attrs)
        except IndexError as exc:
            raise IndexOutOfRangeError(f"index out of range along dimension {dim}: {exc}", op=op,
                                       hint="indices must be in [-size, size) of that "
                                       "dimension") from None

    return run


def kernels(xp, special) -> dict:
    accumulate = add_at(xp)

    def getitem(x, index):
        return x[index]

    def index_backward(g, shape, index):
        out = xp.zeros(shape, dtype=g.dtype)
        if any(getattr(i, "ndim", None) is not None for i in index):
            accumulate(out, index, g)
        else:
            out[index] = g
        return out

    def gather(x, index, dim):
        return xp.take_along_axis(x[_leading(index.shape, dim)], index, axis=dim)

    def scatter(x, index, src, dim):
        out = x.copy()
        xp.put_along_axis(out[_leading(index.shape, dim)], index, src[_leading(index.shape)],
                          axis=dim)
        return out

    def scatter_add(x, index, src, dim):
        out = x.copy()
        accumulate(out, along_axis(xp, index, dim), src[_leading(index.shape)])
        return out

    def index_select(x, index, dim):
        return xp.take(x, index, axis=dim)

    def masked_fill(x, mask, value):
        return xp.where(mask, xp.asarray(value, dtype=x.dtype), x)

    def pad(x, pad_width, mode, value):
        if mode == "constant":
            return xp.pad(x, pad_width, mode="constant", constant_values=value)
        return xp.pad(x, pad_width, mode=_NUMPY_PAD_MODE[mode])

    def pad_backward(g, pad_width, mode, shape):
        """Fold each padded border back onto the elements it copied, one dimension at a time."""
        for d, (before, after) in enumerate(pad_width):
            if not (before or after):
                continue
            n = shape[d]

            def part(start, stop, _d=d):
                return (slice(None),) * _d + (slice(start, stop),)

            acc = g[part(before, before + n)].copy()
            head, tail = g[part(0, before)], g[part(before + n, None)]
            if mode == "reflect":
                acc[part(1, before + 1)] += xp.flip(head, axis=d)
                acc[part(n - 1 - after, n - 1)] += xp.flip(tail, axis=d)
            elif mode == "replicate":
                acc[part(0, 1)] += head.sum(axis=d, keepdims=True)
                acc[part(n - 1, n)] += tail.sum(axis=d, keepdims=True)
            else:  # circular
                acc[part(n - before, n)] += head
                acc[part(0, after)] += tail
            g = acc
        return g

    def one_hot(x, num_classes):
        return (x[..., None] == xp.arange(num_classes)).astype(xp.int64)

    def roll(x, shifts, dims):
        return xp.roll(x, shifts, axis=dims)

    return {
        "reshape": lambda x, shape: x.reshape(shape),
        "permute": lambda x, dims: x.transpose(dims),
        "repeat": lambda x, repeats: xp.tile(x, repeats),
        "cat": lambda *xs, dim: xp.concatenate(xs, axis=dim),
        "stack": lambda *xs, dim: xp.stack(xs, axis=dim),
        "getitem": getitem, "index_backward": index_backward,
        **{op.__name__: _indexed(op) for op in (gather, scatter, scatter_add, index_select)},
        "masked_fill": masked_fill, "pad": pad, "pad_backward": pad_backward,
        "flip": lambda x, dims: xp.flip(x, axis=dims).copy(),
        "roll": roll,
        "tril": lambda x, diagonal: xp.tril(x, diagonal),
        "triu": lambda x, diagonal: xp.triu(x, diagonal),
        "one_hot": one_hot,
    }
