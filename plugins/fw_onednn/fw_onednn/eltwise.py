"""fw_onednn's elementwise kernels for ``cpu``: fw's activations as oneDNN eltwise primitives
(JIT-vectorised, on oneDNN's OpenMP threads), for float32 arrays large enough to pay.

Each :class:`Eltwise` names the oneDNN algorithm that computes an fw op, with the op's
attributes as oneDNN's ``alpha`` and ``beta``, and the measured cut-off below which fw_cpu's
kernel is faster (:mod:`fw_onednn.sizes`). Its guard takes a C-contiguous float32 array of at
least that many elements; the array goes to oneDNN as one flat run of elements, so a primitive
serves every shape of one size.

Where oneDNN's algorithm differs from fw's definition, the guard refuses those calls (fw_cpu
runs them) or the op is not served at all. Measured against fw_cpu (float32, every value in
[-40, 40] and the special ones; ``tests/test_onednn_eltwise.py``):

- ``relu`` (and ``leaky_relu`` with slope 0): oneDNN's max instruction gives 0 for NaN, fw NaN.
  The guard reads ``x.max()`` (one vectorised pass, ~1/7 of fw_cpu's relu) and refuses an array
  holding a NaN.
- ``gelu``, erf form: oneDNN gives NaN for +inf, fw +inf, and +inf from 2**127 (1.7e38) up,
  where ``x / 2 * (1 + erf)`` overflows in its ``x * (1 + erf)``; the guard refuses an array
  whose maximum is 2**127 or more. Both forms are within 1.1e-6 of fw's everywhere else, but
  oneDNN's tails are coarse: 1e-3 relative where the result is ~1e-3 (x near -3.5), against
  fw_cpu's 6e-8, and the tanh form gives -0 from x < -7.7 (fw: down to -2e-19).
- ``mish``: within 1.3e-6, 6e-4 relative in the far negative tail; ``elu``: within 1.1e-7
  (alpha * (e^x - 1), no expm1: 2e-5 relative near 0); ``sigmoid``, ``silu``, ``sqrt``,
  ``leaky_relu``: within 3e-7 relative (sigmoid gives 0 below x = -87, where fw_cpu's results
  are 1.6e-38 and less). fw's float32 tolerance is 1e-5 + 1e-4 |y|, which every finite float32
  meets (``test_the_whole_float32_range_stays_within_fws_tolerance_of_fw_cpu``).
- Not served: ``exp`` (oneDNN gives +inf for NaN), ``clamp`` and ``hardtanh`` (NaN becomes the
  lower bound), ``softplus`` (oneDNN's log near 1 leaves up to 7.6e-6 where the result is ~0),
  ``log`` (slower than NumPy, and 14 ulps off), and ``tanh``, ``abs``, ``square``, ``round``:
  NumPy's own SIMD loops are as fast up to ~2**18 elements, and at most 1.3–2x slower beyond
  (``benchmarks/eltwise.py``).
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import capi, capi_eltwise, primitive, sizes
from .cache import PRIMITIVES
from .catalog import TAKES
from .layouts import contiguous
from .runtime import ENGINE

F32 = np.dtype(np.float32)
_lookup, _add, _empty = PRIMITIVES.lookup, PRIMITIVES.add, np.empty
# the primitive each guard found, for the kernel the chain runs right after it in this thread
_found = threading.local()


def has_nan(top) -> bool:
    """Whether an array whose maximum is ``top`` holds a NaN (``max`` propagates NaN)."""
    return top != top


def not_finite(top) -> bool:
    """Whether an array whose maximum is ``top`` holds a NaN or +inf."""
    return not top < math.inf


def overflows_doubled(top) -> bool:
    """Whether an array whose maximum is ``top`` holds a NaN or a value whose double is +inf."""
    return not top < 2.0**127


@dataclass(frozen=True)
class Algorithm:
    """oneDNN's eltwise algorithm for one call: ``alg`` with ``alpha`` and ``beta``, and
    ``refuse(x.max())``, true where oneDNN's result would differ from fw's (None: never)."""

    alg: int
    alpha: float = 0.0
    beta: float = 0.0
    refuse: Callable[[float], bool] | None = None


@dataclass(frozen=True)
class Eltwise:
    """An fw op computed by a oneDNN eltwise algorithm.

    Attributes:
        op: the fw op ("gelu").
        algorithm: ``fn(**attrs) -> Algorithm | None``: oneDNN's algorithm for the op's
            attributes, or None where oneDNN computes something else for them.
        min_elements: the measured cut-off: smaller arrays run faster on fw_cpu.
    """

    op: str
    algorithm: Callable[..., Algorithm | None]
    min_elements: int

    @property
    def takes(self) -> str:
        """What the guard accepts, in words (``fw plugins --verbose``)."""
        return TAKES[self.op]


def _relu(negative_slope: float = 0.0) -> Algorithm:
    # oneDNN's relu with slope 0 is a max(x, 0) instruction that drops NaN
    return Algorithm(capi_eltwise.ELTWISE_RELU, float(negative_slope),
                     refuse=has_nan if negative_slope == 0 else None)


def _gelu(approximate: str) -> Algorithm | None:
    if approximate == "tanh":
        return Algorithm(capi_eltwise.ELTWISE_GELU_TANH)
    if approximate == "none":
        return Algorithm(capi_eltwise.ELTWISE_GELU_ERF, refuse=overflows_doubled)
    return None


#: the ops served, with the cut-offs benchmarks/eltwise.py measured (2 threads, AVX-512)
OPS = (
    Eltwise("relu", lambda: _relu(), 1 << 15),
    Eltwise("leaky_relu", _relu, 1 << 11),
    Eltwise("elu", lambda alpha: Algorithm(capi_eltwise.ELTWISE_ELU, float(alpha)), 1 << 12),
    Eltwise("gelu", _gelu, 1 << 10),
    Eltwise("sigmoid", lambda: Algorithm(capi_eltwise.ELTWISE_LOGISTIC), 1 << 12),
    Eltwise("silu", lambda: Algorithm(capi_eltwise.ELTWISE_SWISH, 1.0), 1 << 11),
    Eltwise("mish", lambda: Algorithm(capi_eltwise.ELTWISE_MISH), 1 << 8),
    Eltwise("sqrt", lambda: Algorithm(capi_eltwise.ELTWISE_SQRT), 1 << 15),
)


def eltwise_primitive(algorithm: Algorithm, elements: int):
    """The eltwise primitive of ``algorithm`` over ``elements`` contiguous float32 values
    (arguments src, dst), or a Refusal."""
    flat = primitive.Layout((elements,), contiguous((elements,)))

    def create(pd, descriptors):
        return capi_eltwise.eltwise_forward_primitive_desc_create(
            pd, ENGINE, capi_eltwise.FORWARD_INFERENCE, algorithm.alg,
            descriptors[capi.ARG_SRC], descriptors[capi.ARG_DST], algorithm.alpha,
            algorithm.beta, None)

    return primitive.build([(capi.ARG_SRC, flat), (capi.ARG_DST, flat)], create, (elements,),
                           "eltwise")


class EltwiseKernel:
    """The guard (:meth:`takes`) and kernel (a call) of one :class:`Eltwise` op."""

    def __init__(self, spec: Eltwise):
        self.spec = spec
        # an Algorithm per attribute values, made once (building the record costs ~0.5 us)
        self._algorithm = functools.lru_cache(maxsize=64)(spec.algorithm)
        self.kind = f"{spec.op}:f32"
        sizes.register(spec.op, spec.min_elements)
        self.__qualname__ = self.__name__ = f"onednn_{spec.op}"

    def takes(self, x, **attrs) -> bool:
        """Whether oneDNN computes ``op(x, **attrs)`` as fw defines it, faster than fw_cpu."""
        if x.dtype is not F32 or x.size < sizes.CUTOFFS[self.spec.op] or x.size == 0 or \
                not x.flags.c_contiguous:
            return False
        algorithm = self._algorithm(**attrs)
        if algorithm is None or (algorithm.refuse is not None and algorithm.refuse(x.max())):
            return False
        key = (self.kind, x.size, algorithm)
        entry = _lookup(key) or _add(key, eltwise_primitive, algorithm, x.size)
        _found.entry = entry
        return entry.serves

    def __call__(self, x, **attrs):
        """``op(x)`` on the primitive :meth:`takes` just found, as a new array of x's shape."""
        run, handles, _ = _found.entry.launch
        out = _empty(x.shape, F32)
        status = run(handles, x, out)
        if status:
            capi.check(status, None, "dnnl_primitive_execute")
        return out


#: one kernel per op served, by op name
BY_OP = {spec.op: EltwiseKernel(spec) for spec in OPS}

#: (op, guard, kernel, what the guard takes) for every op this module serves
KERNELS = tuple((op, kernel.takes, kernel, kernel.spec.takes) for op, kernel in BY_OP.items())
