"""Cases for :mod:`fw_core.ops.transcendental`: each function on the inputs of its domain, in the
shapes every elementwise op is checked on, with gradients where it has them; fmod, copysign,
hypot and atan2 also on signed zeros, infinities and integers, nan_to_num with its defaults and
bounds."""

import numpy as np

from fw_core.testing.conformance import Input, OpCase, arg, positive, value

from .elementwise import _binary, _unary


def _between(low: float, high: float):
    """Inputs drawn from [low, high): inside a function's domain, away from its poles."""
    return lambda *shape: arg(*shape, low=low, high=high)


#: signed zeros, infinities and NaN, for functions that treat each by its sign bit
_SPECIALS = np.array([-1.0, -0.0, 0.0, 1.0, np.inf, -np.inf, np.nan])


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
    *_binary("fmod", np.fmod, b_spec=lambda *s: positive(*s)),
    OpCase("fmod", "signs", [value(np.array([-4.0, 7.0, 5.0, 4.0, -7.0, 8.0, -9.0])),
                             value(np.array([2.0, -3.0, 8.0, -2.0, 3.0, 5.0, -5.0]))],
           lambda fw, a, b: fw.tensor(a).fmod(fw.tensor(b)), np.fmod,
           torch=lambda torch, a, b: torch.fmod(a, b), dtypes=("float64",), grad=False),
    OpCase("fmod", "ints", [value(np.array([-4, 7, 5, -7], np.int64)), value(3)],
           lambda fw, a, b: fw.fmod(fw.tensor(a), b), lambda a, b: np.fmod(a, b),
           torch=lambda torch, a, b: torch.fmod(a, b), dtypes=("int64",), grad=False),
    *_binary("copysign", np.copysign),
    OpCase("copysign", "signed_zeros_and_specials",
           [value(np.repeat(_SPECIALS, _SPECIALS.size)), value(np.tile(_SPECIALS, _SPECIALS.size))],
           lambda fw, a, b: fw.copysign(fw.tensor(a), fw.tensor(b)), np.copysign,
           torch=lambda torch, a, b: torch.copysign(a, b), dtypes=("float64",), grad=False),
    OpCase("copysign", "ints_give_float32", [value(np.array([1, -2, 3], np.int64)), value(-0.0)],
           lambda fw, a, b: fw.copysign(fw.tensor(a), b),
           lambda a, b: np.copysign(a, b).astype(np.float32),
           torch=lambda torch, a, b: torch.copysign(a, b), dtypes=("int64",), grad=False),
    *[OpCase("hypot", name, [arg(*sa), arg(*sb)], lambda fw, a, b: fw.hypot(a, b), np.hypot,
             torch=lambda torch, a, b: torch.hypot(a, b), dtypes=("float32", "float64"))
      for name, sa, sb in (("same_shape", (3, 4), (3, 4)), ("broadcast", (2, 1, 4), (3, 1)))],
    OpCase("hypot", "huge_and_tiny", [value(np.array([3e200, 3e-200, np.inf])),
                                      value(np.array([4e200, 4e-200, np.nan]))],
           lambda fw, a, b: fw.hypot(fw.tensor(a), fw.tensor(b)), np.hypot,
           torch=lambda torch, a, b: torch.hypot(a, b), dtypes=("float64",), grad=False),
    *[OpCase("atan2", name, [arg(*sa), arg(*sb)], lambda fw, a, b: fw.atan2(a, b), np.arctan2,
             torch=lambda torch, a, b: torch.atan2(a, b), dtypes=("float32", "float64"))
      for name, sa, sb in (("same_shape", (3, 4), (3, 4)), ("broadcast", (2, 1, 4), (3, 1)))],
    OpCase("atan2", "quadrants_and_specials",
           [value(np.repeat(_SPECIALS, _SPECIALS.size)), value(np.tile(_SPECIALS, _SPECIALS.size))],
           lambda fw, a, b: fw.atan2(fw.tensor(a), fw.tensor(b)), np.arctan2,
           torch=lambda torch, a, b: torch.atan2(a, b), dtypes=("float64",), grad=False),
    OpCase("atan2", "ints_give_float32", [value(np.array([1, -2, 0, 3], np.int64)),
                                         value(np.array([-1, -1, 2, 0], np.int64))],
           lambda fw, a, b: fw.arctan2(fw.tensor(a), fw.tensor(b)),
           lambda a, b: np.arctan2(a, b).astype(np.float32),
           torch=lambda torch, a, b: torch.arctan2(a, b), dtypes=("int64",), grad=False),
    OpCase("nan_to_num", "defaults", [value(_SPECIALS)], lambda fw, x: fw.nan_to_num(fw.tensor(x)),
           np.nan_to_num, torch=lambda torch, x: torch.nan_to_num(x), dtypes=("float64",),
           grad=False),
    OpCase("nan_to_num", "float32_bounds", [value(_SPECIALS.astype(np.float32))],
           lambda fw, x: fw.tensor(x).nan_to_num(nan=1.5, neginf=-7.0),
           lambda x: np.nan_to_num(x, nan=1.5, neginf=-7.0),
           torch=lambda torch, x: torch.nan_to_num(x, nan=1.5, neginf=-7.0),
           dtypes=("float32",), grad=False),
    *_unary("nan_to_num", np.nan_to_num),
    OpCase("sign", "sgn", [arg(3, 4)], lambda fw, x: fw.sgn(x), np.sign,
           torch=lambda torch, x: torch.sgn(x), grad=False),
    OpCase("log2", "ints_give_float32", [value(np.array([1, 8, 1024], np.int64))],
           lambda fw, x: fw.log2(fw.tensor(x)), lambda x: np.log2(x).astype(np.float32),
           torch=lambda torch, x: torch.log2(torch.tensor(x)), dtypes=("int64",), grad=False),
]
