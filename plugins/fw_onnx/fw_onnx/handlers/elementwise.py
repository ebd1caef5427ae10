"""Elementwise ONNX ops (NumPy broadcasting, as fw's ops broadcast)."""

from __future__ import annotations

import fw_core as fw

from .node import fw_dtype

F = fw.nn.functional


def _integer(t) -> bool:
    return not t.is_floating_point() and t.dtype != fw.bool


def div(node, a, b):
    return fw.div(a, b, rounding_mode="trunc") if _integer(a) else a / b


def mod(node, a, b):
    if node.get("fmod", 0) or not _integer(a):
        return fw.fmod(a, b) if node.get("fmod", 0) else fw.remainder(a, b)
    return fw.remainder(a, b)


def pow_(node, a, b):
    out = fw.pow(a, b)
    return out.to(a.dtype) if out.dtype != a.dtype else out


def _variadic(fn):
    def handler(node, *xs):
        out = xs[0]
        for x in xs[1:]:
            out = fn(out, x)
        return out

    return handler


def mean(node, *xs):
    return _variadic(fw.add)(node, *xs) / len(xs)


def clip(node, x, low=None, high=None):
    low = node.get("min", low) if low is None else low
    high = node.get("max", high) if high is None else high
    if low is not None:
        x = fw.maximum(x, low if isinstance(low, fw.Tensor) else fw.tensor(low, dtype=x.dtype))
    if high is not None:
        x = fw.minimum(x, high if isinstance(high, fw.Tensor) else
                       fw.tensor(high, dtype=x.dtype))
    return x


def cast(node, x):
    return x.to(fw_dtype(node.get("to")))


def cast_like(node, x, like):
    return x.to(like.dtype)


def _activation(fn, **defaults):
    def handler(node, x):
        return fn(x, **{k: node.get(onnx_key, v) for k, (onnx_key, v) in defaults.items()})

    return handler


def hard_sigmoid(node, x):
    return fw.clamp(x * node.get("alpha", 0.2) + node.get("beta", 0.5), 0.0, 1.0)


def selu(node, x):
    alpha, gamma = node.get("alpha", 1.67326319217681884765625), \
        node.get("gamma", 1.05070102214813232421875)
    return gamma * fw.where(x > 0, x, alpha * (fw.exp(x) - 1))


def prelu(node, x, slope):
    return fw.where(x >= 0, x, x * slope)


def thresholded_relu(node, x):
    return fw.where(x > node.get("alpha", 1.0), x, fw.zeros_like(x))


def gelu(node, x):
    return F.gelu(x, approximate=node.get("approximate", "none"))


def round_(node, x):
    return fw.round(x)


def where(node, c, a, b):
    return fw.where(c, a, b)


def shrink(node, x):
    bias, lambd = node.get("bias", 0.0), node.get("lambd", 0.5)
    return fw.where(x < -lambd, x + bias, fw.where(x > lambd, x - bias, fw.zeros_like(x)))


def _simple(fn):
    return lambda node, *xs: fn(*xs)


HANDLERS = {
    "Add": _simple(fw.add), "Sub": _simple(fw.sub), "Mul": _simple(fw.mul), "Div": div,
    "Pow": pow_, "Mod": mod, "Neg": _simple(fw.neg), "Abs": _simple(fw.abs),
    "Exp": _simple(fw.exp), "Log": _simple(fw.log), "Sqrt": _simple(fw.sqrt),
    "Reciprocal": _simple(fw.reciprocal), "Relu": _simple(fw.relu),
    "Sigmoid": _simple(fw.sigmoid), "Tanh": _simple(fw.tanh), "Erf": _simple(fw.erf),
    "Sin": _simple(fw.sin), "Cos": _simple(fw.cos), "Tan": _simple(fw.tan),
    "Asin": _simple(fw.asin), "Acos": _simple(fw.acos), "Atan": _simple(fw.atan),
    "Sinh": _simple(fw.sinh), "Cosh": _simple(fw.cosh), "Asinh": _simple(fw.asinh),
    "Acosh": _simple(fw.acosh), "Atanh": _simple(fw.atanh), "Floor": _simple(fw.floor),
    "Ceil": _simple(fw.ceil), "Round": round_, "Sign": _simple(fw.sign),
    "Max": _variadic(fw.maximum), "Min": _variadic(fw.minimum), "Sum": _variadic(fw.add),
    "Mean": mean, "Clip": clip, "Where": where, "Equal": _simple(fw.eq),
    "Less": _simple(fw.lt), "Greater": _simple(fw.gt), "LessOrEqual": _simple(fw.le),
    "GreaterOrEqual": _simple(fw.ge), "And": _simple(fw.logical_and),
    "Or": _simple(fw.logical_or), "Xor": _simple(fw.ne), "Not": _simple(fw.logical_not),
    "IsNaN": _simple(fw.isnan),
    "IsInf": lambda node, x: fw.logical_or(
        fw.logical_and(fw.isinf(x), x > 0) if node.get("detect_positive", 1) else x != x,
        fw.logical_and(fw.isinf(x), x < 0) if node.get("detect_negative", 1) else x != x),
    "Cast": cast, "CastLike": cast_like, "Identity": _simple(lambda x: x),
    "LeakyRelu": _activation(F.leaky_relu, negative_slope=("alpha", 0.01)),
    "Elu": _activation(F.elu, alpha=("alpha", 1.0)), "Celu": _activation(F.celu,
                                                                          alpha=("alpha", 1.0)),
    "Selu": selu, "HardSigmoid": hard_sigmoid,
    "HardSwish": lambda node, x: x * hard_sigmoid_default(x), "Softplus": _simple(F.softplus),
    "Softsign": _simple(F.softsign), "Mish": _simple(F.mish), "Gelu": gelu, "PRelu": prelu,
    "ThresholdedRelu": thresholded_relu, "Shrink": shrink,
    "BitwiseAnd": _simple(fw.bitwise_and), "BitwiseOr": _simple(fw.bitwise_or),
    "BitwiseXor": _simple(fw.bitwise_xor), "BitwiseNot": _simple(fw.bitwise_not),
    "BitShift": lambda node, a, b: (fw.bitwise_left_shift if node.get("direction") == "LEFT"
                                    else fw.bitwise_right_shift)(a, b),
    "Swish": lambda node, x: x * fw.sigmoid(x * node.get("alpha", 1.0)),
}


def hard_sigmoid_default(x):
    """HardSwish's gate: hard sigmoid with alpha 1/6 and beta 0.5."""
    return fw.clamp(x / 6 + 0.5, 0.0, 1.0)
