"""The distributions the tests build, once for fw and once for torch from the same arrays.

Each case is ``(name, build, value)``: ``build(D, t)`` makes the distribution from a
distributions module ``D`` and a tensor constructor ``t`` (``fw.tensor`` or ``torch.tensor``),
``value`` is an array of points in the support to evaluate ``log_prob`` at (batch-shaped).
"""

import numpy as np
import torch

import fw_core as fw


def fw_tensor(values, requires_grad=False):
    """A float64 (or int64) fw tensor of ``values``."""
    data = np.asarray(values)
    dtype = fw.int64 if data.dtype.kind in "iu" else fw.float64
    return fw.tensor(data, dtype=dtype, requires_grad=requires_grad)


def torch_tensor(values, requires_grad=False):
    """The torch twin of :func:`fw_tensor`."""
    data = np.asarray(values)
    dtype = torch.int64 if data.dtype.kind in "iu" else torch.float64
    return torch.tensor(data, dtype=dtype, requires_grad=requires_grad)


def both(build):
    """(fw distribution, torch distribution) built by ``build`` from the same arrays."""
    return build(fw.distributions, fw_tensor), build(torch.distributions, torch_tensor)


_rng = np.random.default_rng(7)


def _spd(n, batch=()):
    a = _rng.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


_COV = _spd(3, (2,))
_TRIL = np.linalg.cholesky(_spd(3))
_LOC3 = _rng.normal(size=(2, 3))
_PROBS = np.array([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]])
_CONC = np.array([[0.5, 1.5, 3.0], [2.0, 2.0, 0.8]])

CASES = [
    ("normal", lambda D, t: D.Normal(t([0.0, 1.5, -2.0]), t([1.0, 0.5, 3.0])),
     np.array([0.3, 1.0, -7.0])),
    ("normal_broadcast", lambda D, t: D.Normal(t([[0.0], [1.0]]), t([0.5, 2.0, 1.0])),
     np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 4.0]])),
    ("uniform", lambda D, t: D.Uniform(t([0.0, -1.0]), t([1.0, 3.0])), np.array([0.25, 2.5])),
    ("bernoulli_probs", lambda D, t: D.Bernoulli(probs=t([0.1, 0.5, 0.9])),
     np.array([1.0, 0.0, 1.0])),
    ("bernoulli_logits", lambda D, t: D.Bernoulli(logits=t([-2.0, 0.3, 4.0])),
     np.array([0.0, 1.0, 1.0])),
    ("categorical_probs", lambda D, t: D.Categorical(probs=t(_PROBS * 3)), np.array([2, 0])),
    ("categorical_logits", lambda D, t: D.Categorical(logits=t(np.log(_PROBS) + 1.0)),
     np.array([1, 2])),
    ("gamma", lambda D, t: D.Gamma(t([0.5, 2.0, 9.0]), t([1.0, 0.5, 3.0])),
     np.array([0.2, 3.0, 2.5])),
    ("beta", lambda D, t: D.Beta(t([0.5, 2.0, 5.0]), t([1.5, 2.0, 0.7])),
     np.array([0.2, 0.5, 0.9])),
    ("dirichlet", lambda D, t: D.Dirichlet(t(_CONC)),
     np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])),
    ("mvn_covariance", lambda D, t: D.MultivariateNormal(t(_LOC3), covariance_matrix=t(_COV)),
     _rng.normal(size=(2, 3))),
    ("mvn_precision", lambda D, t: D.MultivariateNormal(t(_LOC3), precision_matrix=t(_COV)),
     _rng.normal(size=(2, 3))),
    ("mvn_scale_tril", lambda D, t: D.MultivariateNormal(t(_LOC3[0]), scale_tril=t(_TRIL)),
     _rng.normal(size=(4, 3))),
]

#: cases by name
BY_NAME = {name: (build, value) for name, build, value in CASES}
