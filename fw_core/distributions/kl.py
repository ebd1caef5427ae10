"""KL divergences KL(p || q) between distributions, looked up by their types.

``register_kl(P, Q)`` registers a function for a pair of classes; ``kl_divergence(p, q)`` calls
the most specific registered pair for ``type(p)``, ``type(q)`` (by their method resolution
orders) and raises UnsupportedError (a ``NotImplementedError``) when none applies, as PyTorch
does. The formulas are PyTorch's, in fw ops, so they differentiate in every parameter.
"""

from __future__ import annotations

import math

from ..errors import ArgumentTypeError, UnsupportedError
from ..ops.creation import full_like
from ..ops.elementwise import digamma, lgamma, log, logical_or, softplus, where
from ._triangular import solve_lower, solve_lower_matrix
from .bernoulli import Bernoulli
from .beta import Beta, log_beta
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .gamma import Gamma, xlogy
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .uniform import Uniform

_REGISTRY: dict[tuple[type, type], object] = {}


def register_kl(type_p: type, type_q: type):
    """Decorator: ``@register_kl(Normal, Normal) def kl(p, q): ...`` makes ``kl`` the
    KL(p || q) for those classes (and their subclasses, unless a more specific pair is
    registered)."""
    for t in (type_p, type_q):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise ArgumentTypeError(f"register_kl takes Distribution subclasses, got {t!r}",
                                    op="register_kl", hint="register_kl(Normal, Normal)")

    def decorator(fn):
        _REGISTRY[type_p, type_q] = fn
        return fn

    return decorator


def _lookup(type_p: type, type_q: type):
    best, rank = None, None
    for (p, q), fn in _REGISTRY.items():
        if issubclass(type_p, p) and issubclass(type_q, q):
            here = (type_p.__mro__.index(p), type_q.__mro__.index(q))
            if rank is None or here < rank:
                best, rank = fn, here
    return best


def kl_divergence(p: Distribution, q: Distribution):
    """KL(p || q) = E_p[log p(x) - log q(x)], batched over the distributions' batch shapes."""
    fn = _lookup(type(p), type(q))
    if fn is None:
        raise UnsupportedError(
            f"no KL divergence registered for {type(p).__name__} || {type(q).__name__}",
            op="kl_divergence",
            hint="register one with @fw.distributions.register_kl(P, Q), or estimate it by "
                 "Monte Carlo: (p.log_prob(x) - q.log_prob(x)).mean() with x = p.sample(...)")
    return fn(p, q)


_INF = math.inf


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return (var_ratio + t1 - 1 - log(var_ratio)) * 0.5


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = where(p.probs == 0, 0.0, where(q.probs == 0, _INF, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = where(p.probs == 1, 0.0, where(q.probs == 1, _INF, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    return where(p.probs == 0, 0.0, where(q.probs == 0, _INF, t)).sum(-1)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = log((q.high - q.low) / (p.high - p.low))
    return where(logical_or(q.low > p.low, q.high < p.high), _INF, result)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    pa, pb, qa, qb = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    return (log_beta(qa, qb) - log_beta(pa, pb) + (pa - qa) * digamma(pa)
            + (pb - qb) * digamma(pb) + (qa - pa + qb - pb) * digamma(pa + pb))


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    pc, qc = p.concentration, q.concentration
    return (qc * log(p.rate / q.rate) + lgamma(qc) - lgamma(pc) + (pc - qc) * digamma(pc)
            + (q.rate - p.rate) * (pc / p.rate))


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    pc, qc = p.concentration, q.concentration
    p_total, q_total = pc.sum(-1), qc.sum(-1)
    t1 = lgamma(p_total) - lgamma(q_total)
    t2 = (lgamma(pc) - lgamma(qc)).sum(-1)
    t4 = digamma(pc) - digamma(p_total).unsqueeze(-1)
    return t1 - t2 + ((pc - qc) * t4).sum(-1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise UnsupportedError(f"KL between multivariate normals of sizes {p.event_shape} and "
                               f"{q.event_shape}", op="kl_divergence",
                               hint="both must have the same event shape")
    p_tril, q_tril = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    ratio = solve_lower_matrix(q_tril, p_tril)  # q_L^-1 p_L: its squared entries sum to the trace
    trace = (ratio * ratio).sum((-2, -1))
    z = solve_lower(q_tril, q.loc - p.loc)
    n = p.event_shape[0]
    return q._half_log_det() - p._half_log_det() + ((z * z).sum(-1) + trace - n) * 0.5


# -- pairs of different families ------------------------------------------------------------------
def _infinite_like(tensor):
    return full_like(tensor, _INF)


@register_kl(Normal, Uniform)
@register_kl(Normal, Gamma)
@register_kl(Normal, Beta)
def _kl_normal_infinity(p, q):
    """+inf: a normal puts mass outside the other's bounded support."""
    return _infinite_like(p.loc)


@register_kl(Gamma, Uniform)
@register_kl(Gamma, Beta)
def _kl_gamma_infinity(p, q):
    """+inf: a gamma puts mass above any bounded support."""
    return _infinite_like(p.concentration)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    t1 = log(q.scale * math.sqrt(2 * math.pi) / width)
    t2 = width * width / 12
    t3 = ((p.high + p.low - q.loc * 2) * 0.5) ** 2
    return t1 + (t2 + t3) * 0.5 / (q.scale * q.scale)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    t2 = lgamma(q.concentration) - q.concentration * log(q.rate)
    t3 = (1 - q.concentration) * (xlogy(p.high, p.high) - xlogy(p.low, p.low) - width) / width
    t4 = q.rate * (p.high + p.low) * 0.5
    return where(p.low < 0, _INF, t2 + t3 + t4 - log(width))


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    a, b = q.concentration1, q.concentration0
    t2 = (a - 1) * (xlogy(p.high, p.high) - xlogy(p.low, p.low) - width) / width
    lo, hi = 1 - p.low, 1 - p.high
    t3 = (b - 1) * (xlogy(hi, hi) - xlogy(lo, lo) + width) / width
    result = t3 + log_beta(a, b) - log(width) - t2
    return where(logical_or(p.high > 1, p.low < 0), _INF, result)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = log(q.high - q.low) - p.entropy()
    return where(logical_or(q.low > 0, q.high < 1), _INF, result)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    a, b = p.concentration1, p.concentration0
    mean = a / (a + b)
    var_normal = q.scale * q.scale
    t2 = log(var_normal * (2 * math.pi)) * 0.5
    t3 = (mean * (1 - mean) / (a + b + 1) + mean * mean) * 0.5
    return t2 - p.entropy() + (t3 - q.loc * mean + q.loc * q.loc * 0.5) / var_normal


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    a, b = p.concentration1, p.concentration0
    t2 = lgamma(q.concentration) - q.concentration * log(q.rate)
    t3 = (q.concentration - 1) * (digamma(a) - digamma(a + b))
    return t2 - p.entropy() - t3 + q.rate * a / (a + b)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    c, rate = p.concentration, p.rate
    var_normal = q.scale * q.scale
    rate_sq = rate * rate
    t1 = log(rate_sq * var_normal * (2 * math.pi)) * 0.5 - c - lgamma(c)
    t2 = (c * c + c) * 0.5 / rate_sq
    t3 = q.loc * c / rate
    return t1 + (c - 1) * digamma(c) + (t2 - t3 + q.loc * q.loc * 0.5) / var_normal
