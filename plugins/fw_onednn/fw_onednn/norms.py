"""fw_onednn's softmax, layer_norm and batch_norm kernels for ``cpu``: oneDNN's softmax and
normalisation primitives on float32 arrays, large enough to pay.

Each guard takes C-contiguous float32 arrays whose shapes the op accepts (anything else goes to
fw_cpu, which also raises fw's errors) and which oneDNN's JIT code serves; the primitive is
keyed by the rows and features the op reduces over, so every shape with the same split shares
one. Measured against fw_cpu on this project's 2-core AVX-512 machine (benchmarks/eltwise.py):

- softmax over the last dimension (or one followed only by dimensions of size 1): 2.6–3.8x.
  Other dimensions oneDNN serves only with its reference loops: fw_cpu runs them. An array
  holding NaN or +inf is refused: oneDNN then gives NaN only where the NaN or inf was and 0
  elsewhere, fw a whole row of NaN. log_softmax is left to fw_cpu: oneDNN's log of each row's
  sum is ~15 ulps off (up to 3.8e-6 on values near -4), where fw_cpu and PyTorch are within an
  ulp or two, and its gradient ``g - exp(out) * sum(g)`` carries that error into a difference
  near 0 (a (45, 65) gradient 1.4e-5 from PyTorch's).
- layer_norm over any trailing shape: 5–12x.
- batch_norm on (N, C) batches, training (batch statistics, running statistics updated in place
  as fw_cpu does, from oneDNN's mean and biased variance) and evaluation (running statistics):
  3.3x. (N, C, *) batches in fw's layout (channels-first, contiguous) get oneDNN's generic
  ``ncsp`` code, measured 0.6–1.2x fw_cpu: refused.

fw's VJPs of these ops recompute what they need from the inputs and the output, so the kernels
keep no workspace.
"""

from __future__ import annotations

import ctypes
import math
import threading

import numpy as np

from . import capi, capi_eltwise, primitive, sizes
from .cache import PRIMITIVES
from .catalog import TAKES
from .eltwise import not_finite
from .layouts import contiguous
from .primitive import Layout
from .runtime import ENGINE

F32 = np.dtype(np.float32)
_lookup, _add, _empty = PRIMITIVES.lookup, PRIMITIVES.add, np.empty
# the primitive each guard found, for the kernel the chain runs right after it in this thread
_found = threading.local()

#: measured cut-offs (elements of x; benchmarks/eltwise.py)
sizes.register("softmax", 1 << 6)
sizes.register("layer_norm", 1 << 6)
sizes.register("batch_norm", 1 << 8)


def _plain(dims: tuple[int, ...]) -> Layout:
    return Layout(dims, contiguous(dims))


def _float32(*arrays) -> bool:
    """Every array (None: absent) is C-contiguous float32."""
    return all(a is None or (a.dtype is F32 and a.flags.c_contiguous) for a in arrays)


def _run(status: int) -> None:
    if status:
        capi.check(status, None, "dnnl_primitive_execute")


# -- softmax -------------------------------------------------------------------------------------
def softmax_primitive(alg: int, rows: int, features: int):
    """A softmax (``alg``: oneDNN's softmax algorithm) over the last of (rows, features)
    contiguous float32 values (arguments src, dst), or a Refusal."""
    layout = _plain((rows, features))

    def create(pd, descriptors):
        return capi_eltwise.softmax_forward_primitive_desc_create(
            ctypes.byref(pd), ENGINE, capi_eltwise.FORWARD_INFERENCE, alg,
            descriptors[capi.ARG_SRC], descriptors[capi.ARG_DST], 1, None)

    return primitive.build([(capi.ARG_SRC, layout), (capi.ARG_DST, layout)], create,
                           (rows, features), "softmax")


class SoftmaxKernel:
    """The guard (:meth:`takes`) and kernel (a call) of a softmax-family op."""

    def __init__(self, op: str, alg: int):
        self.op, self.alg, self.kind = op, alg, f"{op}:f32"
        self.__qualname__ = self.__name__ = f"onednn_{op}"

    def takes(self, x, dim) -> bool:
        """Whether oneDNN computes ``op(x, dim)``: float32, C-contiguous, no NaN or +inf, and
        ``dim`` followed only by dimensions of size 1."""
        if x.dtype is not F32 or x.size < sizes.CUTOFFS[self.op] or x.size == 0 or \
                not x.flags.c_contiguous or not -x.ndim <= dim < x.ndim:
            return False
        dim %= x.ndim
        if math.prod(x.shape[dim + 1:]) != 1 or not_finite(x.max()):
            return False
        features = x.shape[dim]
        key = (self.kind, x.size // features, features)
        entry = _lookup(key) or _add(key, softmax_primitive, self.alg, x.size // features,
                                     features)
        _found.entry = entry
        return entry.serves

    def __call__(self, x, dim):
        run, handles, _ = _found.entry.launch
        out = _empty(x.shape, F32)
        _run(run(handles, x, out))
        return out


# -- layer_norm ----------------------------------------------------------------------------------
def layer_norm_primitive(rows: int, features: int, eps: float, flags: int):
    """A layer normalisation of (rows, features) contiguous float32 values over the features
    (arguments src, dst, then scale and shift where ``flags`` asks for them), or a Refusal."""
    layout = _plain((rows, features))
    arguments = [(capi.ARG_SRC, layout), (capi.ARG_DST, layout)]
    if flags & capi_eltwise.USE_SCALE:
        arguments.append((capi_eltwise.ARG_SCALE, _plain((features,))))
    if flags & capi_eltwise.USE_SHIFT:
        arguments.append((capi_eltwise.ARG_SHIFT, _plain((features,))))

    def create(pd, descriptors):
        return capi_eltwise.layer_normalization_forward_primitive_desc_create(
            ctypes.byref(pd), ENGINE, capi_eltwise.FORWARD_INFERENCE,
            descriptors[capi.ARG_SRC], descriptors[capi.ARG_DST], None, eps, flags, None)

    return primitive.build(arguments, create, (rows, features), "layer normalization")


def _flags(weight, bias) -> int:
    return (capi_eltwise.USE_SCALE if weight is not None else 0) | \
        (capi_eltwise.USE_SHIFT if bias is not None else 0)


def takes_layer_norm(x, *tensors, normalized_shape, eps, has_weight, has_bias) -> bool:
    """Whether oneDNN computes ``layer_norm``: float32, C-contiguous, ``normalized_shape`` the
    trailing shape of x and of the weight and bias given."""
    k = len(normalized_shape)
    if x.dtype is not F32 or x.size < sizes.CUTOFFS["layer_norm"] or x.size == 0 or \
            k == 0 or x.shape[x.ndim - k:] != tuple(normalized_shape) or \
            len(tensors) != has_weight + has_bias or not _float32(x, *tensors) or \
            any(t.shape != x.shape[x.ndim - k:] for t in tensors):
        return False
    weight = tensors[0] if has_weight else None
    bias = tensors[-1] if has_bias else None
    features = math.prod(normalized_shape)
    key = ("layer_norm:f32", x.size // features, features, eps, _flags(weight, bias))
    entry = _lookup(key) or _add(key, layer_norm_primitive, *key[1:])
    _found.entry = entry
    return entry.serves


def run_layer_norm(x, *tensors, normalized_shape, eps, has_weight, has_bias):
    """``layer_norm`` on the primitive :func:`takes_layer_norm` just found (the weight and bias
    are read as flat runs of the normalised features)."""
    run, handles, _ = _found.entry.launch
    out = _empty(x.shape, F32)
    _run(run(handles, x, out, *tensors))
    return out


# -- batch_norm ----------------------------------------------------------------------------------
def batch_norm_primitive(batch: int, channels: int, eps: float, flags: int, training: bool):
    """A batch normalisation of (batch, channels) contiguous float32 values (arguments src, dst,
    mean, variance, then scale and shift where ``flags`` asks for them): with the batch's
    statistics, which it writes to mean and variance, when ``training``; else with the mean and
    variance given. Or a Refusal."""
    layout, per_channel = _plain((batch, channels)), _plain((channels,))
    arguments = [(capi.ARG_SRC, layout), (capi.ARG_DST, layout),
                 (capi_eltwise.ARG_MEAN, per_channel), (capi_eltwise.ARG_VARIANCE, per_channel)]
    if flags & capi_eltwise.USE_SCALE:
        arguments.append((capi_eltwise.ARG_SCALE, per_channel))
    if flags & capi_eltwise.USE_SHIFT:
        arguments.append((capi_eltwise.ARG_SHIFT, per_channel))
    prop = capi_eltwise.FORWARD_TRAINING if training else capi_eltwise.FORWARD_INFERENCE
    stats = 0 if training else capi_eltwise.USE_GLOBAL_STATS

    def create(pd, descriptors):
        return capi_eltwise.batch_normalization_forward_primitive_desc_create(
            ctypes.byref(pd), ENGINE, prop, descriptors[capi.ARG_SRC],
            descriptors[capi.ARG_DST], eps, flags | stats, None)

    return primitive.build(arguments, create, (batch, channels), "batch normalization")


def _split(tensors, has_running, has_weight, has_bias):
    it = iter(tensors)
    return [next(it) if present else None
            for present in (has_running, has_running, has_weight, has_bias)]


def takes_batch_norm(x, *tensors, training, momentum, eps, has_running, has_weight,
                     has_bias) -> bool:
    """Whether oneDNN computes ``batch_norm``: an (N, C) float32 batch, every (C,) tensor
    float32 and C-contiguous, more than one row when training."""
    if x.dtype is not F32 or x.ndim != 2 or x.size < sizes.CUTOFFS["batch_norm"] or \
            x.shape[0] < 2 or len(tensors) != 2 * has_running + has_weight + has_bias or \
            not _float32(x, *tensors) or any(t.shape != x.shape[1:] for t in tensors) or \
            not (training or has_running):
        return False
    _, _, weight, bias = _split(tensors, has_running, has_weight, has_bias)
    key = ("batch_norm:f32", *x.shape, eps, _flags(weight, bias), bool(training))
    entry = _lookup(key) or _add(key, batch_norm_primitive, *key[1:])
    _found.entry = entry
    return entry.serves


def run_batch_norm(x, *tensors, training, momentum, eps, has_running, has_weight, has_bias):
    """``batch_norm`` on the primitive :func:`takes_batch_norm` just found; when training with
    running statistics, updates them in place as fw_cpu's kernel does (unbiased variance)."""
    running_mean, running_var, weight, bias = _split(tensors, has_running, has_weight, has_bias)
    run, handles, _ = _found.entry.launch
    out = _empty(x.shape, F32)
    if training:
        mean, var = _empty(x.shape[1], F32), _empty(x.shape[1], F32)
    else:
        mean, var = running_mean, running_var
    affine = [t for t in (weight, bias) if t is not None]
    _run(run(handles, x, out, mean, var, *affine))
    if training and has_running:
        count = x.shape[0]
        running_mean[...] = (1 - momentum) * running_mean + momentum * mean
        running_var[...] = (1 - momentum) * running_var + momentum * var * (count / (count - 1))
    return out


SOFTMAX = SoftmaxKernel("softmax", capi_eltwise.SOFTMAX_ACCURATE)

#: (op, guard, kernel, what the guard takes) for every op this module serves
KERNELS = tuple((op, guard, kernel, TAKES[op]) for op, guard, kernel in (
    ("softmax", SOFTMAX.takes, SOFTMAX),
    ("layer_norm", takes_layer_norm, run_layer_norm),
    ("batch_norm", takes_batch_norm, run_batch_norm),
))
