"""log_prob, entropy, moments and shapes of every distribution equal torch.distributions'
(float64, to 1e-6), for each parameterisation and with broadcasting batch shapes."""

import numpy as np
import pytest

import fw_core as fw

from .cases import BY_NAME, CASES, both, fw_tensor, torch_tensor

NAMES = [name for name, _, _ in CASES]


def _close(fw_value, torch_value, tol=1e-6):
    got, want = fw_value.detach().numpy(), torch_value.detach().numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", NAMES)
def test_log_prob_matches_torch(name):
    build, value = BY_NAME[name]
    ours, theirs = both(build)
    _close(ours.log_prob(fw_tensor(value)), theirs.log_prob(torch_tensor(value)))


@pytest.mark.parametrize("name", NAMES)
def test_log_prob_broadcasts_a_sample_dim_as_torch(name):
    build, value = BY_NAME[name]
    ours, theirs = both(build)
    stacked = np.stack([value, value])  # (2,) + batch + event: a sample dim in front
    _close(ours.log_prob(fw_tensor(stacked)), theirs.log_prob(torch_tensor(stacked)))


@pytest.mark.parametrize("name", NAMES)
def test_entropy_matches_torch(name):
    ours, theirs = both(BY_NAME[name][0])
    _close(ours.entropy(), theirs.entropy())


@pytest.mark.parametrize("name", [n for n in NAMES if not n.startswith("categorical")])
@pytest.mark.parametrize("moment", ["mean", "variance", "stddev"])
def test_moments_match_torch(name, moment):
    ours, theirs = both(BY_NAME[name][0])
    _close(getattr(ours, moment), getattr(theirs, moment))


@pytest.mark.parametrize("name", ["categorical_probs", "categorical_logits"])
def test_categorical_parameters_are_normalised_as_torch(name):
    ours, theirs = both(BY_NAME[name][0])
    _close(ours.probs, theirs.probs)
    _close(ours.logits, theirs.logits)
    assert np.isnan(ours.mean.numpy()).all() and ours.mean.shape == tuple(theirs.mean.shape)


@pytest.mark.parametrize("name", ["bernoulli_probs", "bernoulli_logits"])
def test_bernoulli_probs_and_logits_agree_with_torch(name):
    ours, theirs = both(BY_NAME[name][0])
    _close(ours.probs, theirs.probs)
    _close(ours.logits, theirs.logits)


@pytest.mark.parametrize("name", ["mvn_covariance", "mvn_precision", "mvn_scale_tril"])
@pytest.mark.parametrize("matrix", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal_matrices_match_torch(name, matrix):
    ours, theirs = both(BY_NAME[name][0])
    _close(getattr(ours, matrix), getattr(theirs, matrix))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("sample_shape", [(), (5,), (2, 3)])
def test_sample_shapes_match_torch(name, sample_shape):
    ours, theirs = both(BY_NAME[name][0])
    assert ours.batch_shape == tuple(theirs.batch_shape)
    assert ours.event_shape == tuple(theirs.event_shape)
    drawn = ours.sample(sample_shape)
    assert drawn.shape == tuple(theirs.sample(sample_shape).shape)
    assert drawn.dtype == (fw.int64 if name.startswith("categorical") else fw.float64)
    assert not drawn.requires_grad
    if ours.has_rsample:
        assert ours.rsample(sample_shape).shape == drawn.shape


@pytest.mark.parametrize("name", NAMES)
def test_expand_matches_torch(name):
    ours, theirs = both(BY_NAME[name][0])
    batch = (4,) + ours.batch_shape
    big, big_torch = ours.expand(batch), theirs.expand(batch)
    assert big.batch_shape == tuple(big_torch.batch_shape)
    assert big.sample((2,)).shape == tuple(big_torch.sample((2,)).shape)
    _close(big.entropy(), big_torch.entropy())


@pytest.mark.parametrize("name", NAMES)
def test_log_prob_gradients_match_torch(name):
    """d sum(log_prob) / d every float parameter, against torch's autograd."""
    build, value = BY_NAME[name]
    grads = {}
    for label, make in (("fw", fw_tensor), ("torch", torch_tensor)):
        leaves = []

        def leaf(values, _make=make, _leaves=leaves):
            t = _make(values, requires_grad=np.asarray(values).dtype.kind == "f")
            _leaves.append(t)
            return t

        module = fw.distributions if label == "fw" else __import__("torch").distributions
        dist = build(module, leaf)
        (dist.log_prob(make(value)).sum() + dist.entropy().sum()).backward()
        grads[label] = [t.grad for t in leaves]
    for ours, theirs in zip(grads["fw"], grads["torch"]):
        _close(ours, theirs)


@pytest.mark.parametrize("name", [n for n in NAMES if not n.startswith(("beta", "dirichlet"))])
def test_mode_matches_torch(name):
    ours, theirs = both(BY_NAME[name][0])
    np.testing.assert_allclose(ours.mode.numpy(), theirs.mode.numpy(), rtol=1e-6, atol=1e-6)
    assert ours.mode.shape == tuple(theirs.mode.shape)


def test_bernoulli_mode_is_nan_at_one_half_and_uniform_everywhere_as_torch():
    for build in (lambda D, t: D.Bernoulli(probs=t([0.2, 0.5, 0.7])),
                  lambda D, t: D.Uniform(t([0.0, 1.0]), t([2.0, 3.0]))):
        ours, theirs = both(build)
        np.testing.assert_array_equal(ours.mode.numpy(), theirs.mode.numpy())


@pytest.mark.parametrize("name", ["normal", "normal_broadcast", "uniform"])
def test_cdf_matches_torch(name):
    build, value = BY_NAME[name]
    ours, theirs = both(build)
    _close(ours.cdf(fw_tensor(value)), theirs.cdf(torch_tensor(value)))


def test_uniform_icdf_matches_torch():
    ours, theirs = both(BY_NAME["uniform"][0])
    _close(ours.icdf(fw_tensor([0.1, 0.75])), theirs.icdf(torch_tensor([0.1, 0.75])))


@pytest.mark.parametrize("name", ["bernoulli_probs", "categorical_logits"])
@pytest.mark.parametrize("expand", [True, False])
def test_enumerate_support_matches_torch(name, expand):
    ours, theirs = both(BY_NAME[name][0])
    got, want = ours.enumerate_support(expand), theirs.enumerate_support(expand)
    assert got.shape == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    _close(ours.log_prob(got), theirs.log_prob(want))
