"""PyTorch idioms that use torch.distributions, run with ``import fw_core as torch``: a
REINFORCE policy-gradient step and a VAE's reparameterised KL term, each compared with the same
program on torch (same weights, same draws)."""

import numpy as np
import torch as real_torch

import fw_core


def _policy_gradient_step(torch, weights, actions):
    """The score-function loss of a categorical policy, as in pytorch/examples' reinforce.py."""
    w = torch.tensor(weights, requires_grad=True)
    states = torch.tensor(np.linspace(-1, 1, 12).reshape(4, 3))
    dist = torch.distributions.Categorical(logits=states @ w)
    rewards = torch.tensor([1.0, -0.5, 2.0, 0.3], dtype=states.dtype)
    action = torch.tensor(actions)
    loss = -(dist.log_prob(action) * rewards).mean() - 0.01 * dist.entropy().mean()
    loss.backward()
    return loss.item(), w.grad.numpy()


def _vae_loss(torch, mu, log_var, eps):
    """A VAE's KL term and reparameterised draw: Normal(mu, std) against Normal(0, 1)."""
    mu = torch.tensor(mu, requires_grad=True)
    log_var = torch.tensor(log_var, requires_grad=True)
    std = (0.5 * log_var).exp()
    posterior = torch.distributions.Normal(mu, std)
    prior = torch.distributions.Normal(torch.zeros_like(mu), torch.ones_like(std))
    z = mu + std * torch.tensor(eps)  # the draw rsample makes, with the noise shared
    kl = torch.distributions.kl_divergence(posterior, prior).sum(-1).mean()
    loss = kl + (z ** 2).sum(-1).mean() - posterior.log_prob(z).sum(-1).mean()
    loss.backward()
    return loss.item(), mu.grad.numpy(), log_var.grad.numpy()


def test_reinforce_step_runs_renamed_and_matches_torch():
    weights = np.random.default_rng(0).normal(size=(3, 5))
    actions = np.array([0, 4, 2, 2])
    ours = _policy_gradient_step(fw_core, weights, actions)
    theirs = _policy_gradient_step(real_torch, weights, actions)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-10)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10, atol=1e-12)


def test_vae_kl_term_runs_renamed_and_matches_torch():
    rng = np.random.default_rng(1)
    mu, log_var, eps = rng.normal(size=(3, 4, 2))
    ours = _vae_loss(fw_core, mu, log_var, eps)
    theirs = _vae_loss(real_torch, mu, log_var, eps)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
