"""Reductions over ``dim`` (an int, a tuple, or None for all) with ``keepdim``: ``sum``,
``mean``, ``prod``, ``amax``/``amin`` (and ``max``/``min``, fw's value ops), ``argmax``/
``argmin``, ``var``/``std`` with ``correction``, the vector ``norm`` of order ``p``. Each
writes into the output; half precision sums accumulate in float32, as fw's kernels do."""

from __future__ import annotations

import math

import numpy as np

from ..kernel_api import Kernel, Writes


def _axes(spec):
    dim = spec.attrs.get("dim")
    return tuple(dim) if isinstance(dim, (tuple, list)) else dim


def _accumulator(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _sum_like(name):
    def factory(spec):
        axis, keep = _axes(spec), bool(spec.attrs.get("keepdim", False))
        acc = _accumulator(spec.out.dtype)
        fn = getattr(np, name)
        return Writes(lambda out, x: fn(x, axis=axis, keepdims=keep, dtype=acc, out=out))
    return factory


def _extremum(name):
    def factory(spec):
        axis, keep = _axes(spec), bool(spec.attrs.get("keepdim", False))
        fn = getattr(np, name)
        return Writes(lambda out, x: fn(x, axis=axis, keepdims=keep, out=out))
    return factory


def var(spec, root=False):
    """``sum((x - mean)^2) / max(0, n - correction)``; its square root with ``root``."""
    x = spec.inputs[0]
    axis, keep = _axes(spec), bool(spec.attrs.get("keepdim", False))
    correction = spec.attrs.get("correction", 1)
    acc = _accumulator(x.dtype)
    centred = spec.scratch(x.shape, acc)
    axes = range(len(x.shape)) if axis is None else (axis,) if isinstance(axis, int) else axis
    axes = {a % len(x.shape) for a in axes}
    mean = spec.scratch(tuple(1 if a in axes else n for a, n in enumerate(x.shape)), acc)
    n = math.prod(x.shape[a] for a in axes)
    divisor = acc.type(max(n - correction, 0))

    def run(out, x):
        np.mean(x, axis=axis, keepdims=True, dtype=acc, out=mean)
        np.subtract(x, mean, out=centred, casting="unsafe")
        np.multiply(centred, centred, out=centred)
        np.sum(centred, axis=axis, keepdims=keep, out=out)
        np.true_divide(out, divisor, out=out)
        if root:
            np.sqrt(out, out=out)
    return Writes(run)


def std(spec):
    """The square root of :func:`var`."""
    return var(spec, root=True)


def norm(spec):
    """``(sum |x|^p)^(1/p)`` over ``dim``: p = 2 and 1 directly, +-inf the largest and smallest
    magnitude, 0 the count of non-zeros; computed in float64 for float32 and narrower, as fw."""
    x = spec.inputs[0]
    axis, keep = _axes(spec), bool(spec.attrs.get("keepdim", False))
    p = float(spec.attrs.get("p", 2))
    wide = np.dtype(np.float64) if x.dtype.itemsize <= 4 else x.dtype
    magnitude = spec.scratch(x.shape, wide)

    def run(out, x):
        np.abs(x, out=magnitude, casting="unsafe")
        if p == math.inf or p == -math.inf:
            (np.max if p > 0 else np.min)(magnitude, axis=axis, keepdims=keep, out=out)
            return
        if p == 0:
            np.not_equal(magnitude, 0, out=magnitude)
        elif p != 1:
            np.power(magnitude, p, out=magnitude)
        np.sum(magnitude, axis=axis, keepdims=keep, out=out, dtype=wide)
        if p not in (0, 1):
            np.power(out, 1 / p, out=out)
    return Writes(run)


KERNELS = [Kernel("sum", _sum_like("sum")), Kernel("mean", _sum_like("mean")),
           Kernel("prod", _sum_like("prod")),
           *(Kernel(op, _extremum(fn)) for op, fn in (
               ("amax", "max"), ("max", "max"), ("amin", "min"), ("min", "min"),
               ("argmax", "argmax"), ("argmin", "argmin"))),
           Kernel("var", var), Kernel("std", std), Kernel("norm", norm)]
