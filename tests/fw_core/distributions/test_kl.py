"""kl_divergence against torch's for every pair torch registers among fw's distributions, and the
registry's behaviour (most specific pair wins, unregistered pairs raise NotImplementedError)."""

import numpy as np
import pytest
import torch

import fw_core as fw
from fw_core.errors import ArgumentTypeError, FwError

from .cases import both, fw_tensor, torch_tensor

_SPD = np.array([[[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5]],
                 [[1.0, -0.2, 0.0], [-0.2, 0.7, 0.1], [0.0, 0.1, 0.9]]])

FAMILIES = {
    "normal": (lambda D, t: D.Normal(t([0.0, 1.0, 0.3]), t([1.0, 2.0, 0.4])),
               lambda D, t: D.Normal(t([0.5, -1.0, 0.0]), t([0.7, 1.0, 3.0]))),
    "bernoulli": (lambda D, t: D.Bernoulli(probs=t([0.2, 0.0, 1.0, 0.6])),
                  lambda D, t: D.Bernoulli(logits=t([0.3, -1.0, 2.0, 0.0]))),
    "categorical": (lambda D, t: D.Categorical(probs=t([[0.2, 0.0, 0.8], [0.3, 0.3, 0.4]])),
                    lambda D, t: D.Categorical(logits=t([[0.1, 1.0, -1.0], [0.0, 0.5, 2.0]]))),
    "uniform": (lambda D, t: D.Uniform(t([0.2, 0.0, -1.0]), t([0.7, 2.0, 1.0])),
                lambda D, t: D.Uniform(t([0.0, 0.5, -2.0]), t([1.0, 3.0, 2.0]))),
    "gamma": (lambda D, t: D.Gamma(t([0.5, 2.0, 7.0]), t([1.0, 0.3, 2.0])),
              lambda D, t: D.Gamma(t([1.5, 1.0, 3.0]), t([2.0, 1.0, 0.5]))),
    "beta": (lambda D, t: D.Beta(t([0.5, 2.0, 4.0]), t([1.0, 3.0, 0.6])),
             lambda D, t: D.Beta(t([2.0, 1.0, 1.5]), t([2.0, 0.5, 3.0]))),
    "dirichlet": (lambda D, t: D.Dirichlet(t([[0.5, 1.0, 2.0], [3.0, 1.0, 0.2]])),
                  lambda D, t: D.Dirichlet(t([[1.0, 1.0, 1.0], [0.7, 2.0, 4.0]]))),
    "mvn": (lambda D, t: D.MultivariateNormal(t([[0.0, 1.0, -1.0], [0.5, 0.5, 0.0]]),
                                              covariance_matrix=t(_SPD)),
            lambda D, t: D.MultivariateNormal(t([1.0, 0.0, 0.0]), precision_matrix=t(_SPD[0]))),
}

#: cross pairs (p family, q family) torch registers; the parameters keep p inside q's support
CROSS = [("uniform", "normal"), ("normal", "uniform"), ("normal", "gamma"), ("normal", "beta"),
         ("gamma", "uniform"), ("gamma", "beta"), ("gamma", "normal"), ("beta", "normal"),
         ("beta", "gamma"), ("beta", "uniform"), ("uniform", "gamma"), ("uniform", "beta")]


def _pair(p_build, q_build):
    (p, tp), (q, tq) = both(p_build), both(q_build)
    return fw.distributions.kl_divergence(p, q), torch.distributions.kl_divergence(tp, tq)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_same_family_kl_matches_torch(family):
    ours, theirs = _pair(*FAMILIES[family])
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_kl_of_a_distribution_with_itself_is_zero(family):
    ours, _ = _pair(FAMILIES[family][0], FAMILIES[family][0])
    np.testing.assert_allclose(ours.numpy(), 0.0, atol=1e-9)


@pytest.mark.parametrize("p_family, q_family", CROSS)
def test_cross_family_kl_matches_torch(p_family, q_family):
    ours, theirs = _pair(FAMILIES[p_family][0], FAMILIES[q_family][1])
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)


def test_uniform_kl_is_infinite_where_p_leaves_q_support_as_torch():
    ours, theirs = _pair(FAMILIES["uniform"][1], FAMILIES["uniform"][0])
    assert np.isinf(ours.numpy()).tolist() == np.isinf(theirs.numpy()).tolist() == [True] * 3


@pytest.mark.parametrize("family", ["normal", "gamma", "beta", "mvn"])
def test_kl_gradients_match_torch(family):
    p_build, q_build = FAMILIES[family]
    grads = []
    for module, make in ((fw, fw_tensor), (torch, torch_tensor)):
        leaves = []

        def leaf(values, _make=make, _leaves=leaves):
            _leaves.append(_make(values, requires_grad=True))
            return _leaves[-1]

        D = module.distributions
        D.kl_divergence(p_build(D, leaf), q_build(D, leaf)).sum().backward()
        grads.append([t.grad.numpy() for t in leaves])
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-8)


def test_unregistered_pair_raises_not_implemented_like_torch():
    p, _ = both(FAMILIES["categorical"][0])
    q, _ = both(FAMILIES["normal"][0])
    with pytest.raises(NotImplementedError) as caught:
        fw.distributions.kl_divergence(p, q)
    assert isinstance(caught.value, FwError)
    assert "Categorical || Normal" in str(caught.value)


def test_register_kl_serves_subclasses_and_the_most_specific_pair_wins():
    D = fw.distributions

    class Wide(D.Normal):
        pass

    @D.register_kl(Wide, D.Normal)
    def _kl_wide_normal(p, q):
        return p.loc * 0 - 1.0

    try:
        p, q = Wide(0.0, 2.0), D.Normal(0.0, 1.0)
        assert D.kl_divergence(p, q).item() == -1.0  # (Wide, Normal) beats (Normal, Normal)
        assert D.kl_divergence(q, p).item() == pytest.approx(0.5 * (0.25 - 1 - np.log(0.25)))
    finally:
        from fw_core.distributions import kl

        del kl._REGISTRY[Wide, D.Normal]


def test_register_kl_refuses_non_distributions():
    with pytest.raises(ArgumentTypeError, match="Distribution subclasses"):
        fw.distributions.register_kl(int, fw.distributions.Normal)
