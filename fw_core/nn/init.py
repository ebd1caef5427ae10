"""Parameter initialisation, with PyTorch's formulas (``torch.nn.init``).

Every function writes into its tensor in place (under ``no_grad``, so it works on parameters)
and returns it. Random values come from ``generator`` or the default generator
(``fw.manual_seed``); they are drawn on the host and copied to the tensor's device and dtype.
Inside :func:`skipping` (``fw.nn.utils.skip_init``) every function leaves its tensor as it is:
a module about to receive pretrained weights is built without drawing, or touching the memory
of, values it would throw away.

>>> w = fw.nn.Parameter(fw.empty(8, 4))
>>> fw.nn.init.kaiming_uniform_(w, a=math.sqrt(5))    # Linear's default
"""

from __future__ import annotations

__all__ = ["calculate_gain", "constant_", "eye_", "kaiming_normal_", "kaiming_uniform_",
           "normal_", "ones_", "orthogonal_", "trunc_normal_", "uniform_", "xavier_normal_",
           "xavier_uniform_", "zeros_"]

import contextlib
import functools
import math
import threading

import numpy as np

from .. import random as _random
from ..autograd import no_grad
from ..errors import ShapeError, UnsupportedError
from ..ops.creation import tensor as _tensor
from ..ops.meta import argument_error, describe
from ..tensor import Tensor

_LINEAR_GAINS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                 "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The gain that keeps activations' variance stable through ``nonlinearity``.

    linear / conv / sigmoid: 1; tanh: 5/3; relu: sqrt(2); leaky_relu:
    sqrt(2 / (1 + negative_slope^2)) (``param``, default 0.01); selu: 3/4.

    Raises:
        ValueError: for an unknown nonlinearity or a non-numeric ``param``.
    """
    if nonlinearity in _LINEAR_GAINS:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise argument_error("calculate_gain", f"negative_slope {param!r} is not a number",
                                 "pass the leaky ReLU's slope as a float, e.g. 0.01",
                                 nonlinearity=nonlinearity, param=param)
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise argument_error("calculate_gain", f"unsupported nonlinearity {nonlinearity!r}",
                         f"use one of "
                         f"{', '.join(_LINEAR_GAINS + ('tanh', 'relu', 'leaky_relu', 'selu'))}",
                         nonlinearity=nonlinearity)


def _calculate_fan_in_and_fan_out(tensor: Tensor, op: str | None = None) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight: ``shape[1] * receptive field`` and ``shape[0] * receptive
    field`` (the receptive field is the product of the dimensions after the first two); ``op``
    is the initialiser that asks, for errors."""
    if tensor.ndim < 2:
        raise ShapeError(
            f"fan in and fan out need a tensor with at least 2 dimensions, got shape "
            f"{tuple(tensor.shape)}", op=op, inputs=describe((tensor,)),
            hint="these initialisations are for weights (out_features, in_features, ...); use "
            "uniform_ or normal_ for biases and vectors")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor: Tensor, mode: str, op: str | None = None) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise argument_error(op, f"mode {mode!r} is not supported",
                             "use mode='fan_in' (keeps the forward pass's scale) or 'fan_out' "
                             "(the backward pass's)", values=(tensor,), mode=mode)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, op)
    return fan_in if mode == "fan_in" else fan_out


_skip = threading.local()


@contextlib.contextmanager
def skipping():
    """Within it (in this thread), the initialisation functions write nothing."""
    before = getattr(_skip, "on", False)
    _skip.on = True
    try:
        yield
    finally:
        _skip.on = before


def _writer(fn):
    """``fn`` (an initialiser writing its first argument), a no-op inside :func:`skipping`."""
    @functools.wraps(fn)
    def init(tensor, *args, **kwargs):
        if getattr(_skip, "on", False):
            return tensor
        return fn(tensor, *args, **kwargs)
    return init


def _rng(generator) -> np.random.Generator:
    return (generator or _random.default_generator).numpy


def _write(tensor: Tensor, values) -> Tensor:
    """Copy host ``values`` into ``tensor`` (cast to its dtype, moved to its device)."""
    source = _tensor(np.asarray(values, dtype=np.float64).astype(tensor._data.dtype,
                                                                  copy=False))
    with no_grad():
        tensor.copy_(source.to(tensor.device))
    return tensor


@_writer
def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with samples of U(a, b)."""
    return _write(tensor, _rng(generator).uniform(a, b, tensor.shape))


@_writer
def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with samples of N(mean, std^2)."""
    return _write(tensor, _rng(generator).normal(mean, std, tensor.shape))


@_writer
def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """Fill with samples of N(mean, std^2) conditioned on [a, b] (absolute bounds, as torch).

    Samples outside [a, b] are redrawn, which is exactly the truncated distribution.

    Raises:
        ValueError: if a >= b.
        UnsupportedError: if [a, b] holds less than 1e-9 of the normal's mass.
    """
    if not a < b:
        raise argument_error("trunc_normal_", f"need a < b, got a={a}, b={b}",
                             "a and b are the lower and upper bounds of the samples",
                             values=(tensor,), a=a, b=b)
    mass = _normal_cdf((b - mean) / std) - _normal_cdf((a - mean) / std)
    if mass < 1e-9:
        raise UnsupportedError(
            f"trunc_normal_: [{a}, {b}] holds only {mass:.2e} of N({mean}, {std}^2)",
            hint="choose bounds within a few std of the mean")
    rng = _rng(generator)
    size = math.prod(tensor.shape)
    kept = np.empty(0)
    while kept.size < size:
        wanted = size - kept.size
        draw = rng.normal(mean, std, min(int(wanted / mass * 1.1) + 16, 1 << 22))
        kept = np.concatenate([kept, draw[(draw >= a) & (draw <= b)][:wanted]])
    return _write(tensor, kept.reshape(tensor.shape))


def _normal_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


@_writer
def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    with no_grad():
        tensor.fill_(val)
    return tensor


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0."""
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    return constant_(tensor, 1.0)


@_writer
def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity (ones on the diagonal)."""
    if tensor.ndim != 2:
        raise ShapeError(f"eye_ needs a 2-D tensor, got shape {tuple(tensor.shape)}",
                         hint="reshape the weight to 2-D first")
    return _write(tensor, np.eye(*tensor.shape))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, "xavier_uniform_")
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, "xavier_normal_")
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity, op: str) -> float | None:
    if 0 in tensor.shape:  # torch warns and leaves an empty tensor alone
        return None
    fan = _calculate_correct_fan(tensor, mode, op)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan), gain from
    ``calculate_gain(nonlinearity, a)`` and fan from ``mode`` ("fan_in" or "fan_out")."""
    std = _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_uniform_")
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He normal: N(0, std^2) with std = gain / sqrt(fan)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_normal_")
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


@_writer
def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix (Saxe et al. 2013), scaled by ``gain``; dimensions after the
    first are flattened, so rows (or columns, whichever are fewer) are orthonormal."""
    if tensor.ndim < 2:
        raise ShapeError(f"orthogonal_ needs a tensor with at least 2 dimensions, got shape "
                         f"{tuple(tensor.shape)}", hint="use it on weight matrices")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _rng(generator).normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))  # makes the distribution uniform (Haar)
    if rows < cols:
        q = q.T
    return _write(tensor, (q * gain).reshape(tensor.shape))
