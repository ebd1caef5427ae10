"""The gamma distribution, and standard-gamma draws with their implicit reparameterisation.

A gamma sample has no location-scale form in its shape parameter alpha, so its pathwise
gradient comes from the implicit function theorem, as in PyTorch: with ``F(x; alpha)`` the CDF
and the uniform ``u = F(x; alpha)`` held fixed,

    dx/dalpha = -(dF/dalpha)(x; alpha) / f(x; alpha),

f the density. Beta and Dirichlet samples are normalised gamma samples and inherit it.
"""

from __future__ import annotations

import numpy as np

from ..autograd import is_grad_enabled
from ..ops.creation import as_tensor
from ..ops.elementwise import clamp, digamma, lgamma, log, where
from ..random import default_generator
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, broadcast_all


def standard_gamma(concentration: Tensor) -> Tensor:
    """One Gamma(concentration, 1) draw per element, from fw's generator, clamped to the
    smallest positive float (as PyTorch clamps). Differentiable in ``concentration`` by the
    implicit gradient above, to first order only: a second derivative through the draw is 0
    (PyTorch's ``_standard_gamma_grad`` has none and refuses one)."""
    dtype = concentration.dtype.numpy
    alpha = concentration.detach().numpy().astype(np.float64)
    draw = np.maximum(default_generator.numpy.standard_gamma(alpha), np.finfo(dtype).tiny)
    sample = as_tensor(draw.astype(dtype), device=concentration.device)
    if not (concentration.requires_grad and is_grad_enabled()):
        return sample
    slope = as_tensor(standard_gamma_grad(draw, alpha).astype(dtype), device=concentration.device)
    # value: the draw exactly (the difference is 0); gradient w.r.t. concentration: slope
    return sample + (concentration - concentration.detach()) * slope


def standard_gamma_grad(x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """dx/dalpha of a Gamma(alpha, 1) draw x at a fixed CDF level: ``-(dF/dalpha) / f``.

    dF/dalpha is a central difference of the regularised incomplete gamma function with a step
    relative to alpha (its error, ~1e-10 relative, is far below float32's resolution);
    the density is taken in log space so it does not underflow for large alpha.
    """
    from scipy.special import gammainc, gammaln  # on first use: SciPy is heavy to import

    step = 1e-5 * alpha
    dcdf = (gammainc(alpha + step, x) - gammainc(alpha - step, x)) / (2 * step)
    log_density = (alpha - 1) * np.log(x) - x - gammaln(alpha)
    with np.errstate(over="ignore", invalid="ignore"):
        slope = -dcdf / np.exp(log_density)
    return np.where(np.isfinite(slope), slope, 0.0)


def xlogy(x: Tensor, y: Tensor) -> Tensor:
    """``x * log(y)``, 0 where x is 0 (so a density's ``(alpha - 1) log v`` is 0 at v = 0 for
    alpha = 1), with no NaN in the gradient there."""
    zero = x == 0
    return where(zero, 0.0, x * log(where(zero, 1.0, y)))


class Gamma(Distribution):
    """Gamma(concentration alpha > 0, rate beta > 0): density
    ``beta^alpha x^(alpha-1) e^(-beta x) / Gamma(alpha)`` on x >= 0; mean alpha / beta.

    ``rsample`` is ``standard_gamma(alpha) / beta``: differentiable in beta directly and in
    alpha by implicit reparameterisation.
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args: bool | None = None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, (), validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return clamp((self.concentration - 1) / self.rate, min=0.0)

    @property
    def variance(self):
        return self.concentration / (self.rate * self.rate)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value):
        value = self._value(value)
        a, rate = self.concentration, self.rate
        return xlogy(a, rate) + xlogy(a - 1, value) - rate * value - lgamma(a)

    def entropy(self):
        a = self.concentration
        return a - log(self.rate) + lgamma(a) + (1 - a) * digamma(a)
