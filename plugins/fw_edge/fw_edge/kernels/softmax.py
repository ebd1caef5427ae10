"""``softmax``, ``log_softmax`` and ``safe_softmax`` (a slice all -inf gives 0s, not NaN)
along ``dim``, computed in the output's buffer (half precision in a float32 working array),
with the row maxima and sums in small working arrays."""

from __future__ import annotations

import numpy as np

from ..kernel_api import Kernel, Writes


def _reduced(shape, dim):
    return tuple(1 if a == dim % len(shape) else n for a, n in enumerate(shape))


def softmax_into(spec, shape, dtype, dim, safe=False, log=False, divide=True):
    """``fn(e)``: softmax of ``e`` (an array of ``shape`` and ``dtype``) along ``dim``, in
    place, with working arrays from ``spec``; ``log`` gives log_softmax, ``safe`` 0s for
    slices that are all -inf. ``divide=False`` leaves ``e`` holding exp(e - max) and returns
    the sums to divide by (1 for an all -inf slice when ``safe``), for a caller that divides
    a smaller result instead (attention divides its output, not its scores)."""
    small = _reduced(shape, dim)
    top, total = spec.scratch(small, dtype), spec.scratch(small, dtype)
    work = spec.scratch(shape, dtype) if log else None
    lowest, one = dtype.type(np.finfo(dtype).min), dtype.type(1)
    # the ufuncs' own reductions: np.max / np.sum wrap them in a few µs of Python
    maximum, add = np.maximum.reduce, np.add.reduce

    def run(e):
        maximum(e, axis=dim, keepdims=True, out=top)
        if safe:  # a maximum of -inf becomes the lowest number: exp(-inf - it) = 0, sum 0
            np.maximum(top, lowest, out=top)
        np.subtract(e, top, out=e)
        if log:
            np.exp(e, out=work)
            add(work, axis=dim, keepdims=True, out=total)
            np.log(total, out=total)
            np.subtract(e, total, out=e)
            return None
        np.exp(e, out=e)
        add(e, axis=dim, keepdims=True, out=total)
        if safe:  # a slice with a finite maximum sums to 1 at least (its exp(0)); 0 -> 1
            np.maximum(total, one, out=total)
        if not divide:
            return total
        np.true_divide(e, total, out=e)
        return None
    return run


def _softmax(safe=False, log=False):
    def factory(spec):
        out, dim = spec.out, spec.attrs["dim"]
        if len(out.shape) == 0:
            value = out.dtype.type(0 if log else 1)
            return Writes(lambda o, x: o.fill(value))
        wide = out.dtype == np.float16
        dtype = np.dtype(np.float32) if wide else out.dtype
        inner = softmax_into(spec, out.shape, dtype, dim, safe, log)
        if not wide:
            def run(o, x):
                np.copyto(o, x)
                inner(o)
            return Writes(run)
        work = spec.scratch(out.shape, dtype)

        def run_wide(o, x):
            np.copyto(work, x)
            inner(work)
            np.copyto(o, work, casting="unsafe")
        return Writes(run_wide)
    return factory


KERNELS = [Kernel("softmax", _softmax()), Kernel("safe_softmax", _softmax(safe=True)),
           Kernel("log_softmax", _softmax(log=True))]
