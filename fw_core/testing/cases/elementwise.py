"""Elementwise op cases: every op, with broadcasting, scalars, edge shapes and dtypes."""

import math

import numpy as np
from scipy import special

from fw_core.testing.conformance import OpCase, arg, mask, positive, value

_INT_FLOAT = ("float32", "float64", "float16", "int64", "int32")


def _unary(op, reference, torch_name=None, inp=None, dtypes=("float32", "float64", "float16"),
           **kw):
    spec = inp or (lambda *s: arg(*s))
    torch_name = torch_name or op
    cases = []
    for name, shape in (("matrix", (3, 4)), ("scalar", ()), ("empty", (0, 3)), ("vector", (5,))):
        cases.append(OpCase(
            op, name, [spec(*shape)], lambda fw, x, _op=op: getattr(fw, _op)(x), reference,
            torch=lambda torch, x, _n=torch_name: _resolve(torch, _n)(x),
            dtypes=dtypes if name == "matrix" else ("float32",), **kw))
    return cases


def _resolve(module, dotted: str):
    for part in dotted.split("."):
        module = getattr(module, part)
    return module


def _binary(op, reference, torch_name=None, b_spec=None, **kw):
    b_spec = b_spec or (lambda *s: arg(*s))
    torch_name = torch_name or op
    call = lambda fw, a, b, _op=op: getattr(fw, _op)(a, b)  # noqa: E731
    tcall = lambda torch, a, b, _n=torch_name: getattr(torch, _n)(a, b)  # noqa: E731
    return [
        OpCase(op, "same_shape", [arg(3, 4), b_spec(3, 4)], call, reference, torch=tcall,
               dtypes=("float32", "float64", "float16"), **kw),
        OpCase(op, "broadcast", [arg(2, 1, 4), b_spec(3, 1)], call, reference, torch=tcall, **kw),
        OpCase(op, "scalar_rhs", [arg(3, 2), value(1.5)], call,
               lambda a, b, _r=reference: _r(a, np.asarray(b, a.dtype)),
               # torch.maximum/minimum take tensors only: a 0-d tensor keeps a's dtype
               torch=lambda torch, a, b, _t=tcall: _t(torch, a, torch.tensor(b, dtype=a.dtype)),
               **kw),
        OpCase(op, "empty", [arg(0, 2), b_spec(1, 2)], call, reference, torch=tcall, **kw),
    ]


def _erf(x):
    return special.erf(x).astype(x.dtype)


def _gelu(x):
    return (0.5 * x * (1 + special.erf(x / math.sqrt(2)))).astype(x.dtype)


def _gelu_tanh(x):
    return (0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))).astype(
        x.dtype)


def _special(name, *n):
    """scipy.special's ``name`` (with leading arguments ``n``) in the input's dtype."""
    return lambda x: getattr(special, name)(*n, x).astype(x.dtype)


def _softplus(x):
    return np.where(x > 20, x, np.log1p(np.exp(x))).astype(x.dtype)


def _sig(x):
    return special.expit(x).astype(x.dtype)


CASES = [
    *_unary("neg", np.negative, dtypes=_INT_FLOAT),
    *_unary("abs", np.abs, dtypes=_INT_FLOAT),
    *_unary("sign", np.sign),
    *_unary("exp", np.exp),
    *_unary("log", np.log, inp=lambda *s: positive(*s)),
    *_unary("log1p", np.log1p, inp=lambda *s: positive(*s)),
    *_unary("expm1", np.expm1),
    *_unary("sqrt", np.sqrt, inp=lambda *s: positive(*s)),
    *_unary("rsqrt", lambda x: 1 / np.sqrt(x), inp=lambda *s: positive(*s)),
    *_unary("square", np.square, dtypes=_INT_FLOAT),
    *_unary("reciprocal", np.reciprocal, inp=lambda *s: positive(*s)),
    *_unary("sin", np.sin),
    *_unary("cos", np.cos),
    *_unary("tanh", np.tanh),
    *_unary("sigmoid", _sig),
    *_unary("erf", _erf),
    *_unary("lgamma", _special("gammaln"), inp=lambda *s: positive(*s)),
    *_unary("digamma", _special("digamma"), inp=lambda *s: positive(*s)),
    *[OpCase(op, "negative_non_integers", [value(np.array([-2.5, -1.25, -0.5, 0.75, 6.0]))],
             lambda fw, x, _op=op: getattr(fw, _op)(fw.tensor(x)), _special(reference),
             torch=lambda torch, x, _op=op: getattr(torch, _op)(torch.as_tensor(x)),
             dtypes=("float64",), grad=False)
      for op, reference in (("lgamma", "gammaln"), ("digamma", "digamma"))],
    *[OpCase("polygamma", f"n{n}", [positive(3, 4)], lambda fw, x, _n=n: fw.polygamma(_n, x),
             _special("polygamma", n), torch=lambda torch, x, _n=n: torch.polygamma(_n, x),
             dtypes=("float32", "float64"))
      for n in (0, 1, 3)],
    *_unary("relu", lambda x: np.maximum(x, 0), dtypes=_INT_FLOAT),
    *_unary("silu", lambda x: x * _sig(x), torch_name="nn.functional.silu"),
    *_unary("mish", lambda x: x * np.tanh(np.log1p(np.exp(x))), torch_name="nn.functional.mish"),
    *_unary("floor", np.floor),
    *_unary("ceil", np.ceil),
    *_unary("round", np.round),
    *_unary("isnan", np.isnan, grad=False),
    *_unary("isinf", np.isinf, grad=False),
    *_unary("logical_not", np.logical_not, inp=lambda *s: mask(*s), dtypes=("bool",),
           grad=False),
    *_binary("add", np.add),
    *_binary("sub", np.subtract),
    *_binary("mul", np.multiply),
    *_binary("div", np.divide, b_spec=lambda *s: positive(*s)),
    *_binary("remainder", np.remainder, b_spec=lambda *s: positive(*s)),
    OpCase("remainder", "negative_divisor_ints", [value(np.array([5, -7, 9])), value(-3)],
           lambda fw, a, b: fw.tensor(a) % b, lambda a, b: np.remainder(a, b),
           torch=lambda torch, a, b: torch.tensor(a) % b, dtypes=("int64",), grad=False),
    *_binary("floor_divide", np.floor_divide, b_spec=lambda *s: positive(*s), grad=False),
    OpCase("floor_divide", "ints", [value(np.array([5, -7, 9])), value(2)],
           lambda fw, a, b: fw.tensor(a) // b, lambda a, b: np.floor_divide(a, b),
           torch=lambda torch, a, b: torch.tensor(a) // b, dtypes=("int64",), grad=False),
    *_binary("maximum", np.maximum),
    *_binary("minimum", np.minimum),
    *[c for op in ("eq", "ne", "lt", "le", "gt", "ge")
      for c in _binary(op, getattr(np, {"eq": "equal", "ne": "not_equal", "lt": "less",
                                         "le": "less_equal", "gt": "greater",
                                         "ge": "greater_equal"}[op]), grad=False)],
    OpCase("pow", "tensor_exponent", [positive(3, 4), arg(3, 4)],
           lambda fw, a, b: fw.pow(a, b), np.power, torch=lambda torch, a, b: torch.pow(a, b)),
    OpCase("pow", "scalar_exponent", [arg(3, 4), value(3)], lambda fw, a, b: a ** b,
           lambda a, b: a ** b, torch=lambda torch, a, b: a ** b),
    OpCase("pow", "scalar_base", [value(2.0), arg(3, 4)], lambda fw, a, b: a ** b,
           lambda a, b: np.power(np.asarray(a, b.dtype), b), torch=lambda torch, a, b: a ** b),
    OpCase("logical_and", "broadcast", [mask(3, 4), mask(4)], lambda fw, a, b: fw.logical_and(a, b),
           np.logical_and, torch=lambda torch, a, b: torch.logical_and(a, b), dtypes=("bool",),
           grad=False),
    OpCase("logical_or", "broadcast", [mask(3, 4), mask(4)], lambda fw, a, b: fw.logical_or(a, b),
           np.logical_or, torch=lambda torch, a, b: torch.logical_or(a, b), dtypes=("bool",),
           grad=False),
    *[OpCase(op, "ints_broadcast", [value(np.array([[5, -7, 12], [0, 3, -1]], np.int32)),
                                    value(np.array([3, 2, 10], np.int32))],
             lambda fw, a, b, op=op: getattr(fw, op)(fw.tensor(a), fw.tensor(b)), reference,
             torch=lambda torch, a, b, op=op: getattr(torch, op)(torch.tensor(a), torch.tensor(b)),
             dtypes=("int32",), grad=False)
      for op, reference in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                            ("bitwise_xor", np.bitwise_xor),
                            ("bitwise_left_shift", np.left_shift),
                            ("bitwise_right_shift", np.right_shift))],
    *[OpCase(op, "bools", [mask(3, 4), mask(4)], lambda fw, a, b, op=op: getattr(fw, op)(a, b),
             reference, torch=lambda torch, a, b, op=op: getattr(torch, op)(a, b),
             dtypes=("bool",), grad=False)
      for op, reference in (("bitwise_and", np.logical_and), ("bitwise_or", np.logical_or),
                            ("bitwise_xor", np.logical_xor))],
    OpCase("bitwise_and", "operator_with_scalar", [value(np.array([5, -7, 12], np.int64))],
           lambda fw, a: fw.tensor(a) & 6, lambda a: np.bitwise_and(a, 6),
           torch=lambda torch, a: torch.tensor(a) & 6, dtypes=("int64",), grad=False),
    OpCase("bitwise_not", "ints", [value(np.array([5, -7, 0], np.int64))],
           lambda fw, a: ~fw.tensor(a), np.invert, torch=lambda torch, a: ~torch.tensor(a),
           dtypes=("int64",), grad=False),
    OpCase("bitwise_not", "bools", [mask(3, 4)], lambda fw, a: fw.bitwise_not(a),
           np.logical_not, torch=lambda torch, a: torch.bitwise_not(a), dtypes=("bool",),
           grad=False),
    OpCase("where", "broadcast", [mask(3, 4), arg(3, 4), arg(4)],
           lambda fw, c, a, b: fw.where(c, a, b), np.where,
           torch=lambda torch, c, a, b: torch.where(c, a, b)),
    OpCase("where", "scalar_other", [mask(3, 4), arg(3, 4), value(0.0)],
           lambda fw, c, a, b: fw.where(c, a, b),
           lambda c, a, b: np.where(c, a, np.asarray(b, a.dtype)),
           torch=lambda torch, c, a, b: torch.where(c, a, b)),
    OpCase("leaky_relu", "default", [arg(3, 4)], lambda fw, x: fw.leaky_relu(x, 0.1),
           lambda x: np.where(x > 0, x, 0.1 * x),
           torch=lambda torch, x: torch.nn.functional.leaky_relu(x, 0.1)),
    OpCase("elu", "alpha", [arg(3, 4)], lambda fw, x: fw.elu(x, 1.5),
           lambda x: np.where(x > 0, x, 1.5 * np.expm1(x)),
           torch=lambda torch, x: torch.nn.functional.elu(x, 1.5)),
    OpCase("gelu", "exact", [arg(3, 4)], lambda fw, x: fw.gelu(x), _gelu,
           torch=lambda torch, x: torch.nn.functional.gelu(x)),
    OpCase("gelu", "tanh", [arg(3, 4)], lambda fw, x: fw.gelu(x, approximate="tanh"), _gelu_tanh,
           torch=lambda torch, x: torch.nn.functional.gelu(x, approximate="tanh")),
    OpCase("softplus", "default", [arg(3, 4)], lambda fw, x: fw.softplus(x), _softplus,
           torch=lambda torch, x: torch.nn.functional.softplus(x)),
    OpCase("softplus", "beta_threshold", [arg(3, 4)],
           lambda fw, x: fw.softplus(x, beta=2.0, threshold=1.0),
           lambda x: np.where(2 * x > 1, x, np.log1p(np.exp(2 * x)) / 2).astype(x.dtype),
           torch=lambda torch, x: torch.nn.functional.softplus(x, beta=2.0, threshold=1.0)),
    OpCase("hardtanh", "bounds", [arg(3, 4)], lambda fw, x: fw.hardtanh(x, -0.5, 0.5),
           lambda x: np.clip(x, -0.5, 0.5),
           torch=lambda torch, x: torch.nn.functional.hardtanh(x, -0.5, 0.5)),
    OpCase("clamp", "both", [arg(3, 4)], lambda fw, x: fw.clamp(x, -0.5, 0.7),
           lambda x: np.clip(x, -0.5, 0.7), torch=lambda torch, x: torch.clamp(x, -0.5, 0.7)),
    OpCase("clamp", "min_only", [arg(3, 4)], lambda fw, x: fw.clamp(x, min=0.2),
           lambda x: np.maximum(x, 0.2).astype(x.dtype),
           torch=lambda torch, x: torch.clamp(x, min=0.2)),
]
