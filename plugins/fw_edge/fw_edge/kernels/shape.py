"""Shape ops. ``reshape``, ``permute``, ``broadcast_to`` and ``getitem`` with basic indices
are views of their input (computed once when the input is one of the program's own buffers);
``cat``, ``stack``, ``flip``, ``pad`` and ``getitem`` with index arrays copy into the output."""

from __future__ import annotations

import numpy as np

from ..errors import EdgeError
from ..kernel_api import Kernel, View, Writes


def reshape(spec):
    """A view when the input's layout allows (as NumPy reshapes); a copy into the output
    when the input is a strided view."""
    shape = spec.out.shape
    if spec.inputs[0].contiguous is False:
        def copy(out, x):
            np.copyto(out.reshape(x.shape), x)
        return Writes(copy)
    return View(lambda x: x.reshape(shape), spec.inputs[0].contiguous)


def permute(spec):
    """The input with its axes in the order ``dims``."""
    dims = tuple(spec.attrs["dims"])
    return View(lambda x: x.transpose(dims), dims == tuple(range(len(dims))) and
                spec.inputs[0].contiguous)


def broadcast_to(spec):
    """The input broadcast to the output's shape (a read-only view)."""
    shape = spec.out.shape
    return View(lambda x: np.broadcast_to(x, shape), False)


def getitem(spec):
    """``x[index]``: ints, slices, ``...``, None (fw has already put the index in NumPy's
    form) and index arrays (weights of the program)."""
    index = spec.attrs["index"]
    index = tuple(index) if isinstance(index, (tuple, list)) else (index,)
    if any(isinstance(i, np.ndarray) for i in index):
        def gather(out, x):
            out[...] = x[index]
        return Writes(gather)
    return View(lambda x: x[index], False)


def cat(spec):
    """The inputs joined along the existing axis ``dim``."""
    dim = spec.attrs["dim"]
    return Writes(lambda out, *xs: np.concatenate(xs, axis=dim, out=out))


def stack(spec):
    """The inputs joined along a new axis ``dim``."""
    dim = spec.attrs["dim"]
    return Writes(lambda out, *xs: np.stack(xs, axis=dim, out=out))


def flip(spec):
    """The input reversed along ``dims``, copied (as fw's flip)."""
    dims = tuple(spec.attrs["dims"])
    return Writes(lambda out, x: np.copyto(out, np.flip(x, axis=dims)))


def pad(spec):
    """The input inside a border of ``value`` (``mode="constant"``; the guard refuses the
    mirroring modes, which fw-edge does not run)."""
    widths = spec.attrs["pad_width"]
    if len(widths) != len(spec.out.shape):
        raise EdgeError(f"{spec.where}: {len(widths)} (before, after) pairs for a "
                        f"{len(spec.out.shape)}-d input; export the model again")
    inside = tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, spec.inputs[0].shape))
    value = spec.out.dtype.type(spec.attrs.get("value", 0))

    def run(out, x):
        out.fill(value)
        out[inside] = x
    return Writes(run)


def _constant_pad(spec) -> bool:
    return spec.attrs.get("mode", "constant") == "constant"


KERNELS = [Kernel("reshape", reshape), Kernel("permute", permute),
           Kernel("broadcast_to", broadcast_to), Kernel("getitem", getitem),
           Kernel("cat", cat), Kernel("stack", stack), Kernel("flip", flip),
           Kernel("pad", pad, guard=_constant_pad)]
