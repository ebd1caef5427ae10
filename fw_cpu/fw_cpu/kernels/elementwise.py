"""Elementwise kernels: mostly the namespace's own ufuncs, used directly (no wrapper call)."""

from __future__ import annotations

import math

import numpy as np

from fw_core.errors import DivisionByZeroError

from ..vector_math import Float32Kernels


def kernels(xp, special) -> dict:
    fast = Float32Kernels() if xp is np else None  # large float32 arrays: vectorised Numba loops
    zeros = {}  # a 0-d zero per dtype: maximum(x, array) is ~3x faster than with a Python 0

    def relu(x):
        zero = zeros.get(x.dtype)
        if zero is None:
            zero = zeros[x.dtype] = xp.zeros((), dtype=x.dtype)
        return xp.maximum(x, zero)

    def trunc(x):
        return x if x.dtype.kind in "biu" else xp.trunc(x)

    def rsqrt(x):
        return xp.reciprocal(xp.sqrt(x))

    def silu(x):
        return x * special.expit(x).astype(x.dtype, copy=False)

    def softplus(x, beta, threshold):
        scaled = x * beta
        soft = xp.logaddexp(0, scaled) / beta
        return xp.where(scaled > threshold, x, soft).astype(x.dtype, copy=False)

    def mish(x):
        return x * xp.tanh(xp.logaddexp(0, x)).astype(x.dtype, copy=False)

    def leaky_relu(x, negative_slope):
        return xp.where(x > 0, x, x * negative_slope).astype(x.dtype, copy=False)

    def elu(x, alpha):
        return xp.where(x > 0, x, xp.expm1(xp.minimum(x, 0)) * alpha).astype(x.dtype, copy=False)

    def gelu(x, approximate):
        if fast is not None and fast.applies(x):
            return fast("gelu", x, approximate=approximate)
        if approximate == "tanh":
            inner = (x + 0.044715 * x * x * x) * math.sqrt(2 / math.pi)
            return (0.5 * x * (1 + xp.tanh(inner))).astype(x.dtype, copy=False)
        return (0.5 * x * (1 + special.erf(x * (1 / math.sqrt(2))))).astype(x.dtype, copy=False)

    def hardtanh(x, min_val, max_val):
        return xp.clip(x, min_val, max_val).astype(x.dtype, copy=False)

    def clamp(x, min, max):  # noqa: A002 - the op's attribute names
        return xp.clip(x, min, max).astype(x.dtype, copy=False)

    def where(condition, a, b):
        return xp.where(condition, a, b)

    def sigmoid(x):
        if fast is not None and fast.applies(x):
            return fast("sigmoid", x)
        return special.expit(x).astype(x.dtype, copy=False)

    def has_zero(b) -> bool:  # count_nonzero: 0.3 us where all() takes 1-2 us
        return b == 0 if b.__class__ is int else xp.count_nonzero(b) != b.size

    def floor_divide(a, b):
        out = xp.floor_divide(a, b)
        if out.dtype.kind in "iu" and has_zero(b):
            raise _integer_division_by_zero()
        return out

    def remainder(a, b):
        out = xp.remainder(a, b)
        if out.dtype.kind in "iu" and has_zero(b):
            raise _integer_division_by_zero()
        return out

    def fmod(a, b):
        out = xp.fmod(a, b)
        if out.dtype.kind in "iu" and has_zero(b):
            raise _integer_division_by_zero()
        return out

    def nan_to_num(x, nan, posinf, neginf):
        if x.dtype.kind not in "fc":
            return x.copy()
        return xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    def erf(x):
        if fast is not None and fast.applies(x):
            return fast("erf", x)
        return special.erf(x).astype(x.dtype, copy=False)

    def lgamma(x):
        return special.gammaln(x).astype(x.dtype, copy=False)

    def digamma(x):
        return special.digamma(x).astype(x.dtype, copy=False)

    def polygamma(x, n):
        return special.polygamma(n, x).astype(x.dtype, copy=False)

    return {
        "neg": xp.negative, "abs": xp.abs, "sign": xp.sign, "exp": xp.exp, "log": xp.log,
        "log1p": xp.log1p, "expm1": xp.expm1, "sqrt": xp.sqrt, "rsqrt": rsqrt,
        "square": xp.square, "reciprocal": xp.reciprocal, "sin": xp.sin, "cos": xp.cos,
        "tanh": xp.tanh, "sigmoid": sigmoid, "erf": erf, "lgamma": lgamma, "digamma": digamma,
        "polygamma": polygamma, "relu": relu, "silu": silu,
        "mish": mish, "softplus": softplus, "leaky_relu": leaky_relu, "elu": elu, "gelu": gelu,
        "hardtanh": hardtanh, "clamp": clamp, "floor": xp.floor, "ceil": xp.ceil,
        "round": xp.round, "isnan": xp.isnan, "isinf": xp.isinf,
        "logical_not": xp.logical_not, "add": xp.add, "sub": xp.subtract, "mul": xp.multiply,
        "div": xp.true_divide, "pow": xp.power, "remainder": remainder,
        "floor_divide": floor_divide, "fmod": fmod, "copysign": xp.copysign,
        "hypot": xp.hypot, "nan_to_num": nan_to_num, "maximum": xp.maximum, "minimum": xp.minimum,
        "eq": xp.equal, "ne": xp.not_equal, "lt": xp.less, "le": xp.less_equal,
        "gt": xp.greater, "ge": xp.greater_equal, "logical_and": xp.logical_and,
        "logical_or": xp.logical_or, "bitwise_and": xp.bitwise_and,
        "bitwise_or": xp.bitwise_or, "bitwise_xor": xp.bitwise_xor,
        "bitwise_not": xp.invert, "bitwise_left_shift": xp.left_shift,
        "bitwise_right_shift": xp.right_shift, "where": where, "tan": xp.tan,
        "asin": xp.arcsin, "acos": xp.arccos, "atan": xp.arctan, "atan2": xp.arctan2,
        "sinh": xp.sinh, "cosh": xp.cosh, "asinh": xp.arcsinh, "acosh": xp.arccosh,
        "atanh": xp.arctanh,
        "log2": xp.log2, "log10": xp.log10, "exp2": xp.exp2, "trunc": trunc,
        "frac": lambda x: x - xp.trunc(x),
        "broadcast_to": lambda x, shape: xp.broadcast_to(x, shape),
        "sum_to": lambda x, shape: _sum_to(xp, x, shape),
    }


def _integer_division_by_zero() -> DivisionByZeroError:
    # NumPy gives 0 for an integer divided by 0; PyTorch raises, and so does fw
    return DivisionByZeroError(
        "integer division by zero: an integer result has no inf or NaN to hold it",
        hint="divide floats instead (x.float() // y gives inf), or replace the zero divisors "
        "first, e.g. fw.where(y == 0, 1, y)")


def _sum_to(xp, x, shape):
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, size in enumerate(shape) if size == 1 and x.shape[lead + i] != 1)
    out = x.sum(axis=axes, keepdims=True) if axes else x
    return out.reshape(shape)
