"""Exact GELU, ``x Phi(x)``, in float32: recognising its formula, and the kernel that runs it.

A GELU only needs ``Phi`` to an *absolute* error of about 1e-7 (the output's error is ``|x|``
times it), not erfc's relative accuracy deep in the tail that the generic formula pays for in
float64. So :func:`gelu` writes ``Phi(x) = (1 + tanh(Q(x))) / 2`` with ``Q`` an odd polynomial
of degree 13, a weighted minimax fit of ``atanh(erf(x / sqrt 2))`` on [0, 5.2] (the weight:
``dPhi/dQ`` times ``min(1, |x|)``, so the fit error is that of the GELU output over
``max(1, |x|)``: 2.2e-8). Everything is float32: nine ufunc passes of Horner's rule, one
``tanh``, a handful more. ``x`` is clamped to ±5.75 inside ``Q``, where ``tanh`` rounds to
exactly ±1, so that large ``|x|`` gives ``x`` or ``-0`` exactly and the infinities give what
the formula gives (``inf``; ``-inf * 0 = nan``). Measured against float64 ``math.erfc`` over
the float32 range, the output is within 2e-7 · max(1, |x|) (tests/test_gelu.py).

:func:`matches` decides from a formula's steps whether it is an exact GELU: ``x * 0.5 *
erfc(-x / sqrt 2)`` (fw's export) or ``x * 0.5 * (1 + erf(x / sqrt 2))``, with the products,
negations and divisions by a number in any order or grouping.
"""

from __future__ import annotations

import math

import numpy as np

#: Q(x) = x * P(x^2), P's coefficients highest power first
_P = tuple(np.float32(c) for c in (
    1.846661823456941e-09, -1.3573044289894032e-07, 4.012601081967255e-06,
    -5.5603952172621175e-05, -3.1741472817241664e-05, 0.036332064851281556,
    0.7978853075683499))
#: where Q is clamped: tanh(Q(5.75)) is 1 in float32
_CLAMP = np.float32(5.75)
_HALF, _ONE = np.float32(0.5), np.float32(1.0)
#: float32 working arrays :func:`gelu` takes (``work``), each of the output's shape
WORK = 2


def gelu(x, out, work) -> None:
    """GELU of float32 ``x`` into ``out`` (same shape, float32, not ``x``), computing in the
    ``WORK`` float32 arrays ``work`` of that shape."""
    c, p = work
    np.clip(x, -_CLAMP, _CLAMP, out=c)
    s = np.multiply(c, c, out=out)  # x^2, in the output until the last two passes
    np.multiply(s, _P[0], out=p)
    np.add(p, _P[1], out=p)
    for coefficient in _P[2:]:
        np.multiply(p, s, out=p)
        np.add(p, coefficient, out=p)
    np.multiply(p, c, out=p)
    np.tanh(p, out=p)
    np.add(p, _ONE, out=p)  # 2 Phi(x)
    np.multiply(x, _HALF, out=out)
    np.multiply(out, p, out=out)


def matches(steps, result) -> bool:
    """Whether the formula (checked steps and result, as ``pointwise`` reads them) is an exact
    GELU of its input 0."""
    scale, factors = _product(_tree(steps, result))
    if len(factors) != 2 or ("arg", 0) not in factors:
        return False
    other = factors[1] if factors[0] == ("arg", 0) else factors[0]
    if other[0] == "erfc":  # x / 2 * erfc(-x / sqrt 2)
        return _close(scale, 0.5) and _is_scaled_input(other[1], -math.sqrt(0.5))
    if other[0] == "add":  # x / 2 * (1 + erf(x / sqrt 2))
        terms = other[1:]
        erf = next((t for t in terms if t[0] == "erf"), None)
        one = next((t for t in terms if t[0] == "const"), None)
        return (scale is not None and _close(scale, 0.5) and erf is not None and one is not None
                and _close(one[1], 1.0) and _is_scaled_input(erf[1], math.sqrt(0.5)))
    return False


def _tree(steps, result):
    """The formula as a nested tuple: ``("arg", i)``, ``("const", v)`` or
    ``(name, *operands)``."""
    kind, value = result
    if kind != "step":
        return result
    name, operands = steps[value]
    return (name, *(_tree(steps, o) for o in operands))


def _product(node) -> tuple[float | None, list]:
    """``node`` as a number times a product of factors that are not products (mul, neg and
    division by a number flattened); the number is None where ``node`` is a number itself."""
    name = node[0]
    if name == "const":
        return None, [node]
    if name == "mul":
        scale, factors = 1.0, []
        for operand in node[1:]:
            if operand[0] == "const":
                scale *= operand[1]
            else:
                s, f = _product(operand)
                scale, factors = scale * (1.0 if s is None else s), factors + f
        return scale, factors
    if name == "neg":
        s, f = _product(node[1])
        return (None if s is None else -s), f
    if name == "div" and node[2][0] == "const" and node[2][1] != 0:
        s, f = _product(node[1])
        return (None if s is None else s / node[2][1]), f
    return 1.0, [node]


def _is_scaled_input(node, scale: float) -> bool:
    """Whether ``node`` is input 0 times ``scale``."""
    s, factors = _product(node)
    return factors == [("arg", 0)] and s is not None and _close(s, scale)


def _close(a, b: float) -> bool:
    return a is not None and math.isclose(a, b, rel_tol=1e-9)
