"""Probability distributions with PyTorch's ``torch.distributions`` interface.

Each distribution has ``sample(sample_shape)``, ``log_prob``, ``entropy``, ``mean``,
``variance``/``stddev``, ``batch_shape``/``event_shape`` and ``expand``; the continuous ones
``rsample`` (a sample differentiable in the parameters: location-scale for Normal, Uniform and
MultivariateNormal, the gamma implicit gradient for Gamma, Beta and Dirichlet). Draws come from
fw's generator, so ``fw.manual_seed`` makes them reproducible. Parameters and values are checked
as with PyTorch's ``validate_args``. ``kl_divergence(p, q)`` and ``register_kl`` as in PyTorch.
"""

from . import constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .gamma import Gamma
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Categorical", "Dirichlet", "Distribution", "Gamma",
           "MultivariateNormal", "Normal", "Uniform", "constraints", "kl_divergence",
           "register_kl"]
