"""Shape and indexing kernels: NumPy views where the layout allows, one vectorised call otherwise.

Index arrays arrive already normalised by ``fw_core.ops.shape`` (bool masks turned into integer
positions, a trailing Ellipsis so that a fully indexed element stays a 0-d array). Values out of
range surface as IndexOutOfRangeErrors naming the op; NumPy's own IndexError would only
say "axis".

The kernels are module-level functions taking ``xp`` first (and ``accumulate``, the namespace's
:func:`add_at`, where they add into repeated positions); :func:`kernels` binds them.
"""

from __future__ import annotations

from functools import partial

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


def _indexed(kernel, op: str):
    """``kernel(x, index, ..., dim)`` that also takes 0-d tensors (as 1-element vectors: NumPy's
    along-axis helpers need an axis) and reports out-of-range indices as IndexOutOfRangeErrors
    naming ``op``."""
    return partial(_run_indexed, kernel, op)


def _run_indexed(kernel, op, /, x, index, *rest, dim, **attrs):
    """What :func:`_indexed` returns runs: ``kernel`` on ``x``, ``index`` and ``rest``."""
    if not x.ndim:
        vectors = (a.reshape(1) for a in rest)
        return _run_indexed(kernel, op, x.reshape(1), index.reshape(1), *vectors, dim=0,
                            **attrs).reshape(())
    try:
        return kernel(x, index, *rest, dim, **attrs)
    except IndexError as exc:
        raise IndexOutOfRangeError(f"index out of range along dimension {dim}: {exc}", op=op,
                                   hint="indices must be in [-size, size) of that "
                                   "dimension") from None


def _part(d, start, stop):
    """The index of ``start:stop`` on dimension ``d`` (all of the dimensions before it)."""
    return (slice(None),) * d + (slice(start, stop),)


def reshape(x, shape):
    """``x`` as ``shape`` (a view where the layout allows)."""
    return x.reshape(shape)


def permute(x, dims):
    """``x`` with its dimensions in the order ``dims`` (a view)."""
    return x.transpose(dims)


def repeat(xp, x, repeats):
    """``x`` tiled ``repeats[d]`` times along each dimension ``d`` (PyTorch's ``repeat``)."""
    return xp.tile(x, repeats)


def cat(xp, *xs, dim):
    """The arrays ``xs`` joined along the existing dimension ``dim``."""
    return xp.concatenate(xs, axis=dim)


def stack(xp, *xs, dim):
    """The arrays ``xs`` joined along a new dimension ``dim``."""
    return xp.stack(xs, axis=dim)


def getitem(x, index):
    """``x[index]``, the index already normalised by fw_core."""
    return x[index]


def index_backward(xp, accumulate, g, shape, index):
    """The gradient of ``getitem``: ``g`` put into zeros of ``shape`` at ``index``, added up
    where an index array repeats a position (a plain assignment for basic indices)."""
    out = xp.zeros(shape, dtype=g.dtype)
    if any(getattr(i, "ndim", None) is not None for i in index):
        accumulate(out, index, g)
    else:
        out[index] = g
    return out


def gather(xp, x, index, dim):
    """``x`` picked along ``dim`` at ``index`` (smaller than ``x`` on the other dims)."""
    return xp.take_along_axis(x[_leading(index.shape, dim)], index, axis=dim)


def scatter(xp, x, index, src, dim):
    """A copy of ``x`` with ``src``'s leading part written along ``dim`` at ``index``."""
    out = x.copy()
    xp.put_along_axis(out[_leading(index.shape, dim)], index, src[_leading(index.shape)],
                      axis=dim)
    return out


def scatter_add(xp, accumulate, x, index, src, dim):
    """A copy of ``x`` with ``src``'s leading part added along ``dim`` at ``index`` (repeated
    positions accumulate)."""
    out = x.copy()
    accumulate(out, along_axis(xp, index, dim), src[_leading(index.shape)])
    return out


def index_select(xp, x, index, dim):
    """The entries of ``x`` at the 1-d ``index`` along ``dim``."""
    return xp.take(x, index, axis=dim)


def masked_fill(xp, x, mask, value):
    """``x`` with ``value`` (in the dtype of ``x``) where ``mask`` holds."""
    return xp.where(mask, xp.asarray(value, dtype=x.dtype), x)


def pad(xp, x, pad_width, mode, value):
    """``x`` padded by ``pad_width`` ((before, after) per dim) with PyTorch's mode names."""
    if mode == "constant":
        return xp.pad(x, pad_width, mode="constant", constant_values=value)
    return xp.pad(x, pad_width, mode=_NUMPY_PAD_MODE[mode])


def pad_backward(xp, g, pad_width, mode, shape):
    """Fold each padded border back onto the elements it copied, one dimension at a time."""
    for d, (before, after) in enumerate(pad_width):
        if not (before or after):
            continue
        n = shape[d]
        acc = g[_part(d, before, before + n)].copy()
        head, tail = g[_part(d, 0, before)], g[_part(d, before + n, None)]
        if mode == "reflect":
            acc[_part(d, 1, before + 1)] += xp.flip(head, axis=d)
            acc[_part(d, n - 1 - after, n - 1)] += xp.flip(tail, axis=d)
        elif mode == "replicate":
            acc[_part(d, 0, 1)] += head.sum(axis=d, keepdims=True)
            acc[_part(d, n - 1, n)] += tail.sum(axis=d, keepdims=True)
        else:  # circular
            acc[_part(d, n - before, n)] += head
            acc[_part(d, 0, after)] += tail
        g = acc
    return g


def flip(xp, x, dims):
    """A copy of ``x`` reversed along ``dims`` (PyTorch's flip copies; NumPy's is a view)."""
    return xp.flip(x, axis=dims).copy()


def roll(xp, x, shifts, dims):
    """``x`` shifted circularly by ``shifts`` along ``dims``."""
    return xp.roll(x, shifts, axis=dims)


def tril(xp, x, diagonal):
    """``x`` with the elements above the ``diagonal``-th diagonal zeroed."""
    return xp.tril(x, diagonal)


def triu(xp, x, diagonal):
    """``x`` with the elements below the ``diagonal``-th diagonal zeroed."""
    return xp.triu(x, diagonal)


def one_hot(xp, x, num_classes):
    """The int64 one-hot encoding of ``x``, in a new last dimension of ``num_classes``."""
    return (x[..., None] == xp.arange(num_classes)).astype(xp.int64)


def kernels(xp, special) -> dict:
    """{op name: kernel} for namespace ``xp``."""
    accumulate = add_at(xp)
    return {
        "reshape": reshape, "permute": permute, "repeat": partial(repeat, xp),
        "cat": partial(cat, xp), "stack": partial(stack, xp),
        "getitem": getitem, "index_backward": partial(index_backward, xp, accumulate),
        "gather": _indexed(partial(gather, xp), "gather"),
        "scatter": _indexed(partial(scatter, xp), "scatter"),
        "scatter_add": _indexed(partial(scatter_add, xp, accumulate), "scatter_add"),
        "index_select": _indexed(partial(index_select, xp), "index_select"),
        "masked_fill": partial(masked_fill, xp), "pad": partial(pad, xp),
        "pad_backward": partial(pad_backward, xp), "flip": partial(flip, xp),
        "roll": partial(roll, xp), "tril": partial(tril, xp), "triu": partial(triu, xp),
        "one_hot": partial(one_hot, xp),
    }
