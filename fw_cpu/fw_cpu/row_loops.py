"""Softmax, log_softmax, cross_entropy and class_distribution as Numba row loops.

The generic kernels (kernels/nn.py, kernels/loss.py) make five or six NumPy passes over the
scores (max, subtract, exp, sum, scale, a fancy-index pick) and NumPy's float32 ``exp`` is not
vectorised on AVX2 machines: a (1024, 1000) float32 softmax or cross_entropy took 4-5 ms, a
one-hot class_distribution 2.3 ms. Here each row is read a few times while it sits in the cache:
its maximum, then ``exp`` of the differences into the output (or a scratch row) and their sum,
then the scaling. float32 rows take vector_math's ``exp`` (a vectorised float64 polynomial, within
1 ulp of the rounded exact value; NumPy's float32 ``exp`` is within 2); float64 rows take libm's.

The results match the generic kernels within float reassociation (the sums accumulate in
float64, the differences ``x - max`` round to the input's dtype as there), with the same NaN/inf
behaviour: the maximum ignores NaN, which still reaches the whole row through its ``exp`` (an
all-NaN row, as the generic's NaN maximum gives), and safe_softmax maps all -inf rows to 0.

float32/float64 C-contiguous inputs of at least ``MIN_ELEMENTS`` over the last axis take the
loops; cross_entropy only for (N, C) scores with class-index targets, all of them in range or
ignored. Everything else goes to the generic kernels, which also say what is wrong.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from fw_core.records import KernelSpec

from .kernels import loss
from .vector_math import exp32_text

#: inputs with fewer elements use the generic kernels, where a Numba call would not pay
MIN_ELEMENTS = 1 << 12
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

# One copy per dtype suffix: float32 rows take the polynomial exp, float64 rows libm's.
_SOURCE = '''
@njit(cache=True, error_model="numpy", nogil=True)
def row_max{sfx}(row, lowest):
    """The row's maximum, NaN ignored (``lowest`` for a row of NaN or -inf): four running
    maxima, so that each compare does not wait on the previous one (2x faster)."""
    m0 = m1 = m2 = m3 = lowest
    end = row.size - row.size % 4
    for j in range(0, end, 4):
        v0, v1, v2, v3 = row[j], row[j + 1], row[j + 2], row[j + 3]
        m0 = v0 if v0 > m0 else m0
        m1 = v1 if v1 > m1 else m1
        m2 = v2 if v2 > m2 else m2
        m3 = v3 if v3 > m3 else m3
    for j in range(end, row.size):
        v = row[j]
        m0 = v if v > m0 else m0
    m0 = m1 if m1 > m0 else m0
    m2 = m3 if m3 > m2 else m2
    return m2 if m2 > m0 else m0


@njit(cache=True, error_model="numpy", nogil=True, fastmath={{"reassoc"}})
def row_sum{sfx}(row):
    """The row's float64 sum (reassociated: several accumulators, vectorised)."""
    total = 0.0
    for j in range(row.size):
        total += row[j]
    return total


@njit(cache=True, error_model="numpy", nogil=True, fastmath={{"contract"}})
def row_exp{sfx}(row, m, out):
    """out[j] = e**(row[j] - m), the difference rounded to the row's dtype."""
    for j in range(row.size):
        d = row[j] - m
        out[j] = {exp}


@njit(cache=True, error_model="numpy", nogil=True)
def softmax{sfx}(x, out, safe, lowest):
    """Each row of ``x`` to ``out``; ``safe``: an all -inf row gives zeros, not NaN."""
    one, zero = {dt}(1), {dt}(0)
    for r in range(x.shape[0]):
        m = row_max{sfx}(x[r], lowest)
        if safe and m == lowest:
            m = zero
        row = out[r]
        row_exp{sfx}(x[r], m, row)
        total = {dt}(row_sum{sfx}(row))
        if safe and total == zero:
            total = one
        inv = one / total
        for j in range(row.size):
            row[j] *= inv


@njit(cache=True, error_model="numpy", nogil=True)
def log_softmax{sfx}(x, out, lowest):
    for r in range(x.shape[0]):
        m = row_max{sfx}(x[r], lowest)
        row, source = out[r], x[r]
        row_exp{sfx}(source, m, row)
        lse = {dt}(np.log(row_sum{sfx}(row)))
        for j in range(row.size):
            row[j] = (source[j] - m) - lse


@njit(cache=True, error_model="numpy", nogil=True, fastmath={{"reassoc"}})
def weighted_logp_sum{sfx}(row, m, lse, weight):
    """sum_c weight[c] * log_softmax(row)[c], each log-probability rounded to the dtype."""
    total = 0.0
    for j in range(row.size):
        total += weight[j] * ((row[j] - m) - lse)
    return total


@njit(cache=True, error_model="numpy", nogil=True)
def cross_entropy{sfx}(x, target, weight, ignore_index, smoothing, losses, lowest):
    """Per-sample losses into ``losses``; returns (targets all valid, their sum, the summed
    weights of the counted targets). A target neither ignored nor in range stops the loop."""
    classes = x.shape[1]
    scratch = np.empty(classes, dtype=x.dtype)
    total, counted = 0.0, 0.0
    for r in range(x.shape[0]):
        t = target[r]
        if t == ignore_index:
            losses[r] = 0
            continue
        if t < 0 or t >= classes:
            return False, total, counted
        row = x[r]
        m = row_max{sfx}(row, lowest)
        row_exp{sfx}(row, m, scratch)
        lse = {dt}(np.log(row_sum{sfx}(scratch)))
        w = np.float64(weight[t])
        loss = -np.float64((row[t] - m) - lse) * w
        if smoothing != 0.0:
            smooth = -weighted_logp_sum{sfx}(row, m, lse, weight)
            loss = (1.0 - smoothing) * loss + smoothing / classes * smooth
        losses[r] = loss
        total += loss
        counted += w
    return True, total, counted


@njit(cache=True, error_model="numpy", nogil=True)
def class_distribution{sfx}(target, weight, ignore_index, keep, spread, q):
    """q[n, c] = ([c == t_n] * keep + spread) * weight[c] * [t_n != ignore_index], each step
    rounded to q's dtype as the generic kernel's in-place updates do."""
    one, zero = {dt}(1), {dt}(0)
    for n in range(q.shape[0]):
        t = target[n]
        valid = zero if t == ignore_index else one
        row = q[n]
        for c in range(row.size):
            hit = one if c == t else zero
            row[c] = (hit * keep + spread) * weight[c] * valid
'''

_compiled: dict = {}


def _kernels(dtype) -> dict:
    """The loops for float32 or float64 arrays, compiled (or loaded from Numba's cache) on
    first use; Numba is imported then, not with fw_cpu."""
    found = _compiled.get(np.dtype(dtype))
    if found is None:
        from .fusion import loader

        exps = {"32": f"np.float32({exp32_text('np.float64(d)')})", "64": "np.exp(d)"}
        module = loader.load("import numpy as np\nfrom numba import njit\n" + "".join(
            _SOURCE.format(sfx=sfx, exp=exp, dt=f"np.float{sfx}") for sfx, exp in exps.items()))
        # both dtypes' entries in one update: a thread that finds one finds the other
        _compiled.update({np.dtype(f"float{sfx}"): {
            name: getattr(module, name + sfx) for name in
            ("softmax", "log_softmax", "cross_entropy", "class_distribution")} for sfx in exps})
        found = _compiled[np.dtype(dtype)]
    return found


def _rows(x, dim):
    """``x`` as C-contiguous (rows, classes) over its last axis, or None for the generic kernel."""
    if not isinstance(x, np.ndarray) or x.dtype not in _FLOATS or x.ndim == 0 or \
            x.size < MIN_ELEMENTS or dim % x.ndim != x.ndim - 1 or not x.flags.c_contiguous:
        return None
    return x.reshape(-1, x.shape[-1])


def rows_take(x, dim) -> bool:
    """Whether the row loops take this softmax (else the generic kernel does)."""
    return _rows(x, dim) is not None


def softmax(x, dim, safe=False, log=False):
    """softmax (``log``: log_softmax; ``safe``: all -inf rows give 0) of C-contiguous rows."""
    rows = _rows(x, dim)
    out = np.empty(x.shape, x.dtype)
    loops, lowest = _kernels(x.dtype), x.dtype.type(-np.inf)
    if log:
        loops["log_softmax"](rows, out.reshape(rows.shape), lowest)
    else:
        loops["softmax"](rows, out.reshape(rows.shape), safe, lowest)
    return out


def cross_entropy_takes(x, target, weight=None, *, probs, **_) -> bool:
    """Whether the row loop takes this cross_entropy: (N, C) rows, class-index targets."""
    return (x.ndim == 2 and _rows(x, 1) is not None and not probs and target.dtype.kind in "iu"
            and target.shape == x.shape[:1] and (weight is None or weight.shape == x.shape[1:]))


def cross_entropy(x, target, weight=None, *, ignore_index, reduction, label_smoothing, probs):
    """Cross entropy of (N, C) scores against class indices, one pass per row; a target out
    of range goes to the generic kernel, which says what is wrong."""
    w = np.ones(x.shape[1], x.dtype) if weight is None else weight.astype(x.dtype)
    losses = np.empty(x.shape[0], x.dtype)
    ok, total, counted = _kernels(x.dtype)["cross_entropy"](
        _rows(x, 1), np.ascontiguousarray(target), w, ignore_index, float(label_smoothing),
        losses, x.dtype.type(-np.inf))
    if not ok:
        return loss.cross_entropy(np, x, target, weight, ignore_index=ignore_index,
                                  reduction=reduction, label_smoothing=label_smoothing,
                                  probs=probs)
    if reduction == "none":
        return losses
    if reduction == "mean":
        total = np.divide(total, counted)  # 0 / 0 = NaN when every target is ignored
    return np.asarray(total, dtype=x.dtype)


def class_distribution_takes(target, weight=None, *, num_classes, dtype, **_) -> bool:
    """Whether the row loop builds this target distribution (else the generic kernel does)."""
    return (np.dtype(dtype) in _FLOATS and target.ndim == 1 and target.dtype.kind in "iu"
            and target.size * num_classes >= MIN_ELEMENTS
            and (weight is None or weight.shape == (num_classes,)))


def class_distribution(target, weight=None, *, num_classes, ignore_index, label_smoothing,
                       dtype):
    """The smoothed, weighted one-hot rows of class indices ``target``, in one pass."""
    dtype = np.dtype(dtype)
    q = np.empty((target.shape[0], num_classes), dtype)
    w = np.ones(num_classes, dtype) if weight is None else weight.astype(dtype)
    _kernels(dtype)["class_distribution"](
        np.ascontiguousarray(target), w, ignore_index, dtype.type(1 - label_smoothing),
        dtype.type(label_smoothing / num_classes), q)
    return q


_ROWS = f"float32/float64 C-contiguous inputs of {MIN_ELEMENTS}+ elements"
#: the kernels this module adds to the cpu device, above the generic ones
KERNELS = [
    KernelSpec(op="softmax", device="cpu", fn=softmax, priority=1, guard=rows_take,
               takes=_ROWS + ", over the last dimension"),
    KernelSpec(op="safe_softmax", device="cpu", fn=partial(softmax, safe=True), priority=1,
               guard=rows_take, takes=_ROWS + ", over the last dimension"),
    KernelSpec(op="log_softmax", device="cpu", fn=partial(softmax, log=True), priority=1,
               guard=rows_take, takes=_ROWS + ", over the last dimension"),
    KernelSpec(op="cross_entropy", device="cpu", fn=cross_entropy, priority=1,
               guard=cross_entropy_takes, takes=_ROWS + " of (N, C) scores, class indices"),
    KernelSpec(op="class_distribution", device="cpu", fn=class_distribution, priority=1,
               guard=class_distribution_takes,
               takes=f"1-d class indices into float32/float64 rows, {MIN_ELEMENTS}+ elements"),
]
