"""Vectorisable exp, erf, erfc and tanh for Numba loops over float32 data, computed in float64.

``scipy.special.erf`` on float32 and the libm ``erf``/``tanh`` that Numba calls per element cost
15-30 ns an element (GELU over 512K floats took ~10 ms; PyTorch takes under 1 ms): a call per
element keeps LLVM from vectorising the loop. Here each function is a branch-light float64
formula made only of multiply-adds, comparisons and one division (polynomials fitted by
Chebyshev interpolation against ``scipy.special`` in float64), so a Numba loop over float32
data vectorises: a float32 result is the float64 value rounded once, within 1 ulp of the
exact result (relative error of the formulas below 3e-10; tests/fw_cpu/test_vector_math.py
checks it densely, tails and special values included).

``exp`` is the only transcendental inside: ``exp(y) = E(y / 128) ** 128`` with a degree-12
polynomial ``E`` on [-1, 1] (the power is 7 squarings; the error grows 128-fold to ~1e-11),
valid for ``|y| <= 128``. ``erfc(s) = exp(-s*s) * erfcx(s)`` for ``s >= 1``, so GELU's lower
tail ``x * erfc(-x / sqrt 2) / 2`` stays accurate where ``1 + erf`` would cancel; erf itself
only needs ``erfc`` to an absolute 1e-11 there, a plain polynomial (half the work).

The functions are source text for :mod:`fw_cpu.fusion.render`, which takes them for these
primitives whenever it computes a float32 formula of :mod:`fw_core.ops.scalar` in float64 (a
generated module can only reach ``np`` and ``math``, hence lambdas rather than helpers). So
an op's contract formula serves twice: fused loops inline it, and for large float32 arrays the
eager gelu, sigmoid and erf kernels are Numba loops around it (:class:`Float32Kernels`). Eager
``exp`` and ``tanh`` stay NumPy's, already SIMD (measured as fast as the Numba loop); float64
keeps ``scipy.special``/NumPy/libm, accurate to the last ulp; small float32 arrays keep the
float32 SciPy formulas, where a Numba call would not pay.
"""

from __future__ import annotations

import numpy as np

#: float32 arrays with fewer elements take the NumPy/SciPy kernels
MIN_ELEMENTS = 4096

# exp(q) on [-1, 1] (power basis)
_EXP = (1.0000000000000018, 0.9999999999994817, 0.4999999999998576, 0.16666666668115956,
        0.04166666666893485, 0.008333333217465572, 0.0013888888753415237, 0.00019841309535476498,
        2.4801625819041715e-05, 2.755071294714688e-06, 2.755169883017568e-07,
        2.5579004900610837e-08, 2.1282993291725504e-09)
# erf(x) / x in u = x*x on [0, 1]
_ERF_SMALL = (1.1283791670946948, -0.37612638889868827, 0.11283791313490243, -0.026866133624784058,
              0.005223785004351334, -0.0008542670509602015, 0.00011956946136363396,
              -1.3911696897186849e-05, 1.0595265132857543e-06)
# erfc(s) on [1, 4] (absolute error 1e-11: for erf, whose float32 ulp there is >= 6e-8),
# in t = (s - 2.5) * 2/3
_ERFC_1_4 = (0.00040695202428208885, -0.00326742629973157, 0.01225284742297321,
             -0.028181554643121526, 0.04365081934642359, -0.0464535781164811, 0.03187596612050622,
             -0.009267782605797945, -0.00667685720894518, 0.009622182127397948,
             -0.0045585208784456694, -0.0004434473992673373, 0.001860013794927877,
             -0.0009188635439844424, -0.00010030656858620141, 0.00029381094020966304,
             -7.67024965965485e-05, -3.2936280331195544e-05, 1.5399683792182805e-05)
# erfcx(s) = exp(s*s) erfc(s) on [1, 4], in t = (s - 2.5) * 2/3
_ERFCX_1_4 = (0.21080636405462605, -0.11152102074917417, 0.05611049427315913,
              -0.027005275783565454, 0.012489356649500412, -0.0055709289589198204,
              0.002403783827253841, -0.001004788462093923, 0.00040855914990299574,
              -0.0001644974516064202, 6.367237187120327e-05, -2.048964057905463e-05,
              7.473544498997474e-06, -5.058179388790787e-06, 1.8130127265156303e-06)
# erfcx(s) on [4, 11], in t = (s - 7.5) * 2/7 (erfc(11) ~ 1e-54: float32 results are 0 beyond)
_ERFCX_4_11 = (0.07457369305533935, -0.03420819900626599, 0.015562516350835375,
               -0.007022940606035472, 0.0031443084212877514, -0.0013969392938184767,
               0.0006161215546863272, -0.0002697087481935053, 0.00011655571141204784,
               -5.019119102436837e-05, 2.287229615370514e-05, -9.856944860427294e-06,
               2.5490891636688253e-06, -9.904395576222218e-07, 1.4097044574228645e-06,
               -6.052019878068869e-07)
# tanh(x) / x in u = x*x on [0, 0.3025] (|x| < 0.55)
_TANH_SMALL = (0.9999999999734481, -0.3333333246526547, 0.13333286854637888, -0.05395887489387371,
               0.02177856612054234, -0.008402734115669875, 0.0023844502837524944)


def _poly(coeffs, arg: str) -> str:
    """Estrin's scheme for ``coeffs`` (lowest first) at ``arg``: pairs combined with t, t**2,
    t**4, ... (bound by nested lambdas), a shallow tree where Horner's chain of dependent
    multiply-adds would leave the vector units waiting (measured 2x faster)."""
    terms, powers = [repr(c) for c in coeffs], ["t"]
    while len(terms) > 1:
        power = powers[-1]
        terms = [f"({terms[i]} + {power} * {terms[i + 1]})" if i + 1 < len(terms) else terms[i]
                 for i in range(0, len(terms), 2)]
        powers.append(f"t{2 ** len(powers)}")
    text = terms[0]
    for k in range(len(powers) - 2, 0, -1):
        text = f"(lambda {powers[k]}: {text})({powers[k - 1]} * {powers[k - 1]})"
    return f"(lambda t: {text})({arg})"


def exp_text(y: str, power: int = 128) -> str:
    """e**y for float64 ``y`` with ``|y| <= power`` (a power of 2; anything may come out
    beyond): ``E(y / power) ** power``, the error growing ``power``-fold."""
    return f"({_poly(_EXP, f'({y}) * {1 / power!r}')}) ** {power}"


def exp32_text(x: str) -> str:
    """e**x of float64 ``x`` for a float32 result (inf above 89, 0 below -104)."""
    return f"(lambda y: np.inf if y > 89.0 else (0.0 if y < -104.0 else {exp_text('y')}))({x})"


def exp_wide_text(x: str) -> str:
    """e**x of float64 ``x`` inside a formula rounded to float32: float64's value for
    ``|x| <= 128`` (past float32's range, so ``1 / (1 + e**-x)`` keeps its subnormals), inf
    above and 0 below (where the formulas of fw's ops round to float32 infinity or 0 anyway)."""
    return (f"(lambda y: np.inf if y > 128.0 else (0.0 if y < -128.0 else "
            f"{exp_text('y')}))({x})")


def _erfc_tail(s: str) -> str:
    """erfc(s) for ``s >= 1`` to a relative 3e-10 (0 beyond 11; NaN stays NaN)."""
    erfcx = (f"({_poly(_ERFCX_1_4, '(c - 2.5) * 0.6666666666666666')} if c < 4.0 else "
             f"{_poly(_ERFCX_4_11, '(c - 7.5) * 0.2857142857142857')})")
    return f"(lambda c: 0.0 if c > 11.0 else {exp_text('-c * c')} * {erfcx})({s})"


def erf_text(x: str) -> str:
    """erf of float64 ``x``, to float32 accuracy: 1 beyond 4 (erfc(4) < half an ulp of 1)."""
    erfc = f"(0.0 if s > 4.0 else {_poly(_ERFC_1_4, '(s - 2.5) * 0.6666666666666666')})"
    return (f"(lambda x, s: x * {_poly(_ERF_SMALL, 'x * x')} if s < 1.0 else "
            f"np.copysign(1.0 - {erfc}, x))({x}, np.abs({x}))")


def erfc_text(x: str) -> str:
    """erfc of float64 ``x`` to a relative 3e-10 where erfc is small (``x >= 1``: GELU's lower
    tail ``x * erfc(-x / sqrt 2) / 2`` stays accurate where ``1 + erf`` would cancel)."""
    return (f"(lambda x, s: 1.0 - x * {_poly(_ERF_SMALL, 'x * x')} if s < 1.0 else "
            f"(lambda c, x: c if x > 0.0 else 2.0 - c)({_erfc_tail('s')}, x))({x}, np.abs({x}))")


def tanh_text(x: str) -> str:
    """tanh of float64 ``x``: a polynomial near 0, 1 - 2 / (1 + e**2|x|) beyond."""
    return (f"(lambda x, s: x * {_poly(_TANH_SMALL, 'x * x')} if s < 0.55 else "
            f"np.copysign(1.0 - 2.0 / (1.0 + {exp_text('40.0 if s > 20.0 else 2.0 * s')}), x))"
            f"({x}, np.abs({x}))")


#: primitive of :mod:`fw_core.ops.scalar` -> fn(float64 operand text) -> float64 text, for
#: formulas computed in float64 and rounded to float32 (fw_cpu.fusion.render uses them)
FLOAT64_TEXTS = {"exp": exp_wide_text, "erf": erf_text, "erfc": erfc_text, "tanh": tanh_text}

_LOOP = """
@njit(cache=True, error_model="numpy", fastmath={{"contract"}}, nogil=True)
def loop(a, out):
    for i in range(a.size):
        x0 = a[i]
{body}
        out[i] = np.float32(v)
"""


class Float32Kernels:
    """Eager float32 kernels: a vectorised Numba loop over an op's contract formula (the one the
    fused loops inline), one per op and attributes, compiled on first use (Numba is imported
    then, not with fw_cpu) and cached on disk with the fused kernels."""

    def __init__(self):
        self._loops = {}

    @staticmethod
    def applies(x) -> bool:
        """Whether ``x`` is a float32 array large enough for the Numba loop to pay."""
        return x.dtype == np.float32 and x.size >= MIN_ELEMENTS

    def __call__(self, name: str, x, **attrs):
        """Op ``name`` (an op with a formula) of float32 ``x`` with ``attrs``, a new float32
        array of its shape."""
        key = (name, tuple(sorted(attrs.items())))
        loop = self._loops.get(key)
        if loop is None:
            loop = self._loops[key] = self._compile(name, attrs)
        out = np.empty(x.shape, np.float32)
        loop(x.reshape(-1), out.reshape(-1))
        return out

    @staticmethod
    def _compile(name: str, attrs: dict):
        from fw_core.ops import registry, scalar

        from .fusion import loader, render

        expr = scalar.formula(registry.get(name), attrs, 1)
        lines = render.statements(expr, ["x0"], np.dtype(np.float32), "v")
        body = "\n".join(" " * 8 + line for line in lines)
        source = "import math\n\nimport numpy as np\nfrom numba import njit\n"
        return loader.load(source + _LOOP.format(body=body)).loop
