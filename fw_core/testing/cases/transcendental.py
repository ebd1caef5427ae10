"""Cases for :mod:`fw_core.ops.transcendental`: each function on the inputs of its domain, in the
shapes every elementwise op is checked on, with gradients where it has them."""

import numpy as np

from fw_core.testing.conformance import Input, OpCase, arg, value

from .elementwise import _unary


def _between(low: float, high: float):
    """Inputs drawn from [low, high): inside a function's domain, away from its poles."""
    return lambda *shape: arg(*shape, low=low, high=high)


def _above_one(*shape: int) -> Input:
    return arg(*shape, low=1.2, high=3.0)


CASES = [
    *_unary("tan", np.tan, inp=_between(-1.2, 1.2)),
    *_unary("asin", np.arcsin, inp=_between(-0.9, 0.9)),
    *_unary("acos", np.arccos, inp=_between(-0.9, 0.9)),
    *_unary("atan", np.arctan),
    *_unary("sinh", np.sinh),
    *_unary("cosh", np.cosh),
    *_unary("asinh", np.arcsinh),
    *_unary("acosh", np.arccosh, inp=_above_one),
    *_unary("atanh", np.arctanh, inp=_between(-0.9, 0.9)),
    *_unary("log2", np.log2, inp=_between(0.5, 3.0)),
    *_unary("log10", np.log10, inp=_between(0.5, 3.0)),
    *_unary("exp2", np.exp2),
    *_unary("trunc", np.trunc, grad=False),
    *_unary("frac", lambda x: x - np.trunc(x), inp=_between(-3.0, 3.0)),
    OpCase("trunc", "ints_unchanged", [value(np.array([3, -2, 0], np.int64))],
           lambda fw, x: fw.trunc(fw.tensor(x)), lambda x: x,
           torch=lambda torch, x: torch.trunc(torch.tensor(x)), dtypes=("int64",), grad=False),
    OpCase("log2", "ints_give_float32", [value(np.array([1, 8, 1024], np.int64))],
           lambda fw, x: fw.log2(fw.tensor(x)), lambda x: np.log2(x).astype(np.float32),
           torch=lambda torch, x: torch.log2(torch.tensor(x)), dtypes=("int64",), grad=False),
]
