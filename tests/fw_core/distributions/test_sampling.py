"""Sampling: moments over many draws (fixed seed, statistical tolerances), reproducibility under
fw.manual_seed, and reparameterised gradients: location-scale rsamples against finite
differences of the same draws, the gamma implicit gradient against the exact quantile
derivative and torch's _standard_gamma_grad, and Monte Carlo gradients of E[sample] against the
analytic derivative of the mean."""

import numpy as np
import pytest
import torch
from scipy.special import gammainc, gammaincinv

import fw_core as fw
from fw_core.distributions.gamma import standard_gamma_grad

from .cases import BY_NAME, fw_tensor

D = fw.distributions
N = 40_000


@pytest.mark.parametrize("name", [n for n in BY_NAME if not n.startswith("categorical")])
def test_sample_moments_match_mean_and_variance(name):
    dist = BY_NAME[name][0](D, fw_tensor)
    fw.manual_seed(3)
    draws = dist.sample((N,)).numpy()
    mean, var = dist.mean.numpy(), dist.variance.numpy()
    # within 5 standard errors: the sample mean's is sqrt(var / N), the sample variance's
    # sqrt((kurtosis - 1) / N) var, and these cases' kurtoses are at most 15 (Gamma(0.5))
    np.testing.assert_array_less(np.abs(draws.mean(0) - mean), 5 * np.sqrt(var / N) + 1e-12)
    np.testing.assert_array_less(np.abs(draws.var(0) - var), 5 * np.sqrt(14 / N) * var + 1e-12)


def test_categorical_frequencies_match_probs():
    probs = np.array([[0.1, 0.2, 0.7], [0.0, 0.5, 0.5]])
    fw.manual_seed(4)
    draws = D.Categorical(probs=fw_tensor(probs)).sample((N,)).numpy()
    freq = np.stack([(draws == k).mean(0) for k in range(3)], -1)
    np.testing.assert_array_less(np.abs(freq - probs), 5 * np.sqrt(probs * (1 - probs) / N)
                                 + 1e-12)
    assert draws.min() >= 0 and draws.max() <= 2


def test_multivariate_normal_sample_covariance():
    dist = BY_NAME["mvn_covariance"][0](D, fw_tensor)
    fw.manual_seed(5)
    draws = dist.sample((N,)).numpy()  # (N, 2, 3)
    for b in range(2):
        cov = np.cov(draws[:, b].T)
        want = dist.covariance_matrix.numpy()[b]
        scale = np.sqrt(np.outer(np.diag(want), np.diag(want)))
        np.testing.assert_array_less(np.abs(cov - want), 6 * scale * np.sqrt(2 / N))


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_manual_seed_makes_samples_reproducible(name):
    dist = BY_NAME[name][0](D, fw_tensor)
    fw.manual_seed(11)
    first = dist.sample((3,)).numpy()
    fw.manual_seed(11)
    assert np.array_equal(first, dist.sample((3,)).numpy())
    assert not np.array_equal(first, dist.sample((3,)).numpy())


def _draw_with_seed(build, params, seed=21):
    fw.manual_seed(seed)
    return build(*params).rsample((4,))


@pytest.mark.parametrize("family", ["normal", "uniform", "mvn"])
def test_location_scale_rsample_gradient_is_the_pathwise_derivative(family):
    """d sum(x^2)/d params from autograd equals central differences of the same draws (the
    noise fixed by re-seeding)."""
    build, params = {
        "normal": (D.Normal, [[0.3, -1.0], [0.5, 2.0]]),
        "uniform": (D.Uniform, [[0.0, -2.0], [1.5, 1.0]]),
        "mvn": (lambda loc, tril: D.MultivariateNormal(loc, scale_tril=tril),
                [[0.5, -0.5], [[1.0, 0.0], [0.4, 0.8]]]),
    }[family]
    leaves = [fw_tensor(p, requires_grad=True) for p in params]
    (_draw_with_seed(build, leaves) ** 2).sum().backward()
    for i, p in enumerate(params):
        p = np.asarray(p, dtype=np.float64)
        numeric = np.zeros_like(p)
        for j in np.ndindex(p.shape):
            if family == "mvn" and i == 1 and j[0] < j[1]:
                continue  # above the diagonal: not a parameter of a lower factor
            values = []
            for step in (1e-6, -1e-6):
                moved = p.copy()
                moved[j] += step
                args = [fw_tensor(moved if k == i else q) for k, q in enumerate(params)]
                values.append((_draw_with_seed(build, args) ** 2).sum().item())
            numeric[j] = (values[0] - values[1]) / 2e-6
        got = leaves[i].grad.numpy()
        if family == "mvn" and i == 1:
            got = np.tril(got)
        np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-6)


def test_gamma_implicit_gradient_is_the_exact_quantile_derivative():
    """dx/dalpha at a fixed CDF level u is d/dalpha of the gamma quantile at u."""
    alpha = np.array([0.05, 0.3, 1.0, 2.5, 7.9, 8.5, 30.0, 200.0]).repeat(5)
    x = np.random.default_rng(0).standard_gamma(alpha)
    u, step = gammainc(alpha, x), 1e-6 * alpha
    quantile_slope = (gammaincinv(alpha + step, u) - gammaincinv(alpha - step, u)) / (2 * step)
    np.testing.assert_allclose(standard_gamma_grad(x, alpha), quantile_slope, rtol=1e-6)


def test_gamma_rsample_gradient_matches_torch_standard_gamma_grad():
    """Autograd through Gamma.rsample gives torch's _standard_gamma_grad at the drawn points
    (divided by the rate); torch's is a fitted approximation, good to ~3e-4 relative."""
    alpha = fw_tensor([0.2, 1.0, 3.0, 12.0, 50.0] * 20, requires_grad=True)
    rate = fw_tensor(2.0)
    fw.manual_seed(8)
    draws = D.Gamma(alpha, rate).rsample()
    draws.sum().backward()
    x = torch.tensor(draws.detach().numpy() * 2.0)
    want = torch._standard_gamma_grad(torch.tensor(alpha.detach().numpy()), x).numpy() / 2.0
    np.testing.assert_allclose(alpha.grad.numpy(), want, rtol=5e-4, atol=1e-9)


def test_gamma_rsample_gradient_in_the_rate_is_minus_x_over_rate():
    rate = fw_tensor([0.5, 3.0], requires_grad=True)
    fw.manual_seed(9)
    draws = D.Gamma(fw_tensor([2.0, 0.7]), rate).rsample((6,))
    draws.sum().backward()
    np.testing.assert_allclose(rate.grad.numpy(),
                               (-draws.detach().numpy() / rate.detach().numpy()).sum(0))


MEAN_GRADIENTS = [
    # (family, params, d E[first entry] / d params, analytic)
    ("gamma", [[1.5], [2.0]], lambda a, r: [1 / r, -a / r ** 2]),
    ("beta", [[0.7], [2.5]], lambda a, b: [b / (a + b) ** 2, -a / (a + b) ** 2]),
    ("dirichlet", [[0.8, 2.0, 1.2]],
     lambda c: [((np.arange(3) == 0) * np.sum(c) - c[0]) / np.sum(c) ** 2]),
]


@pytest.mark.parametrize("family, params, analytic", MEAN_GRADIENTS,
                         ids=[m[0] for m in MEAN_GRADIENTS])
def test_implicit_rsample_gradients_average_to_the_gradient_of_the_mean(family, params,
                                                                        analytic):
    leaves = [fw_tensor(p, requires_grad=True) for p in params]
    dist = {"gamma": D.Gamma, "beta": D.Beta, "dirichlet": D.Dirichlet}[family](*leaves)
    fw.manual_seed(12)
    draws = dist.rsample((N,))
    first = draws[..., 0]
    first.mean().backward()
    want = analytic(*[np.asarray(p, dtype=np.float64) for p in params])
    # the Monte Carlo error of these averages over N draws is ~0.002 here
    for leaf, expected in zip(leaves, want):
        np.testing.assert_allclose(leaf.grad.numpy().ravel(), np.ravel(expected),
                                   rtol=0.02, atol=0.005)
