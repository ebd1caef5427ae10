"""Run an optimizer in fw and in torch 2.13 on the same parameters and gradients.

The gradient at step t is ``noise_t + 0.5 * param`` (computed from each framework's own current
parameter values), so a wrong update also feeds back into later gradients. Parameters cover a
matrix, a vector, a 0-d scalar, a size-1 dim and a size-0 tensor; parameter 2 gets no gradient
on every third step (its update and its state must then be skipped).

The ``*_CONFIGS`` at the end are the option combinations every optimizer is checked with (against
torch, and for state-dict round trips).
"""

from __future__ import annotations

import numpy as np
import pytest

import fw_core as fw
import fw_core.optim as optim

SHAPES = [(5, 4), (4,), (), (3, 1, 2), (2, 0)]
TOLERANCE = {np.float64: {"rtol": 1e-10, "atol": 1e-12}, np.float32: {"rtol": 1e-5, "atol": 1e-6}}


def initial(dtype, seed=0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dtype) for shape in SHAPES]


def gradient(step: int, index: int, value: np.ndarray) -> np.ndarray | None:
    if index == 2 and step % 3 == 1:
        return None
    rng = np.random.default_rng(1000 * step + index)
    noise = rng.standard_normal(value.shape)
    return np.asarray(noise + 0.5 * value.astype(np.float64)).astype(value.dtype)


def groups_of(params, groups):
    """The params argument: a flat list, or groups given as (indices, options) pairs."""
    if groups is None:
        return params
    return [{"params": [params[i] for i in indices], **options} for indices, options in groups]


class FwRun:
    """Parameters and an fw optimizer, stepped with the reference gradients."""

    def __init__(self, name, kwargs, values, groups=None):
        self.params = [fw.tensor(v, requires_grad=True) for v in values]
        self.opt = getattr(optim, name)(groups_of(self.params, groups), **kwargs)

    def step(self, t):
        for i, p in enumerate(self.params):
            g = gradient(t, i, p.detach().numpy())
            p.grad = None if g is None else fw.tensor(g)
        self.opt.step()

    def values(self):
        return [p.detach().numpy().copy() for p in self.params]


class TorchRun(FwRun):
    """The same with torch's single-tensor (for-loop) implementation."""

    def __init__(self, name, kwargs, values, groups=None):
        import torch

        self.torch = torch
        self.params = [torch.tensor(v, requires_grad=True) for v in values]
        self.opt = getattr(torch.optim, name)(groups_of(self.params, groups), **kwargs,
                                              foreach=False)

    def step(self, t):
        for i, p in enumerate(self.params):
            g = gradient(t, i, p.detach().numpy())
            p.grad = None if g is None else self.torch.from_numpy(g)
        self.opt.step()


def run(cls, name, kwargs, dtype, steps, groups=None):
    runner = cls(name, kwargs, initial(dtype), groups)
    for t in range(steps):
        runner.step(t)
    return runner


def assert_same(fw_values, torch_values, dtype):
    for i, (a, b) in enumerate(zip(fw_values, torch_values)):
        assert a.dtype == b.dtype, f"param {i}: dtype {a.dtype} vs torch {b.dtype}"
        np.testing.assert_allclose(a, b, **TOLERANCE[dtype], err_msg=f"param {i}")


def assert_matches_torch(name, kwargs, dtype, steps=50, groups=None):
    """50 steps in fw and torch agree, in the parameters and in the optimizer state."""
    pytest.importorskip("torch")
    mine = run(FwRun, name, kwargs, dtype, steps, groups)
    theirs = run(TorchRun, name, kwargs, dtype, steps, groups)
    assert_same(mine.values(), theirs.values(), dtype)
    for i, (p, q) in enumerate(zip(mine.params, theirs.params)):
        state, torch_state = mine.opt.state[p], theirs.opt.state[q]
        assert set(state) == set(torch_state), f"param {i}: state keys"
        for key, value in state.items():
            expected = torch_state[key].detach().numpy()
            np.testing.assert_allclose(value.numpy(), expected, **TOLERANCE[dtype],
                                       err_msg=f"param {i}: state {key!r}")


# -- the option combinations each optimizer is checked with --------------------------------------
SGD_CONFIGS = {
    "plain": {"lr": 0.1},
    "momentum": {"lr": 0.05, "momentum": 0.9},
    "dampening": {"lr": 0.05, "momentum": 0.9, "dampening": 0.3},
    "nesterov": {"lr": 0.05, "momentum": 0.8, "nesterov": True},
    "weight_decay": {"lr": 0.1, "weight_decay": 0.05},
    "maximize": {"lr": 0.01, "maximize": True},
    "momentum_wd_maximize": {"lr": 0.02, "momentum": 0.9, "weight_decay": 0.1,
                             "maximize": True},
    "nesterov_wd_maximize": {"lr": 0.02, "momentum": 0.9, "nesterov": True,
                             "weight_decay": 0.1, "maximize": True},
    "dampening_wd": {"lr": 0.05, "momentum": 0.5, "dampening": 0.5, "weight_decay": 0.01},
    "lr_zero": {"lr": 0.0, "momentum": 0.9},
}


ADAM_CONFIGS = {
    "default": {},
    "betas_lr": {"lr": 0.01, "betas": (0.8, 0.99)},
    "small_beta1": {"lr": 0.01, "betas": (0.3, 0.9)},  # lerp weight >= 0.5: the other form
    "eps": {"lr": 0.02, "eps": 1e-3},
    "weight_decay": {"lr": 0.01, "weight_decay": 0.1},
    "amsgrad": {"lr": 0.01, "amsgrad": True},
    "maximize": {"lr": 0.01, "maximize": True},
    "amsgrad_wd_maximize": {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1,
                            "maximize": True},
    "decoupled": {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
    "beta1_zero": {"lr": 0.01, "betas": (0.0, 0.5)},
}


ADAMW_CONFIGS = {
    "default": {},
    "weight_decay_amsgrad": {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True},
    "maximize": {"lr": 0.01, "maximize": True, "betas": (0.5, 0.9)},
    "no_decay": {"lr": 0.01, "weight_decay": 0.0},
}


RMSPROP_CONFIGS = {
    "default": {},
    "alpha": {"lr": 0.005, "alpha": 0.9},
    "eps": {"lr": 0.01, "eps": 1e-2},
    "weight_decay": {"lr": 0.01, "weight_decay": 0.1},
    "momentum": {"lr": 0.005, "momentum": 0.9},
    "centered": {"lr": 0.005, "centered": True},
    "centered_small_alpha": {"lr": 0.005, "centered": True, "alpha": 0.3},
    "centered_momentum_wd": {"lr": 0.005, "centered": True, "momentum": 0.5,
                             "weight_decay": 0.05},
    "maximize": {"lr": 0.005, "maximize": True},
    "all": {"lr": 0.002, "alpha": 0.95, "centered": True, "momentum": 0.8, "weight_decay": 0.1,
            "maximize": True},
}


ADAGRAD_CONFIGS = {
    "default": {},
    "lr_decay": {"lr": 0.1, "lr_decay": 0.1},
    "weight_decay": {"lr": 0.05, "weight_decay": 0.1},
    "initial_accumulator": {"lr": 0.1, "initial_accumulator_value": 0.5},
    "eps": {"lr": 0.1, "eps": 1e-2},
    "maximize": {"lr": 0.05, "maximize": True},
    "all": {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1, "initial_accumulator_value": 0.1,
            "eps": 1e-6, "maximize": True},
}


ADADELTA_CONFIGS = {
    "default": {},
    "lr_rho": {"lr": 0.5, "rho": 0.5},
    "rho_one": {"lr": 0.5, "rho": 1.0},
    "eps": {"eps": 1e-3},
    "weight_decay": {"weight_decay": 0.1},
    "maximize": {"lr": 0.1, "maximize": True},
    "all": {"lr": 0.3, "rho": 0.95, "eps": 1e-4, "weight_decay": 0.05, "maximize": True},
}


ADAMAX_CONFIGS = {
    "default": {},
    "betas_lr": {"lr": 0.01, "betas": (0.5, 0.9)},
    "eps": {"lr": 0.01, "eps": 1e-2},
    "weight_decay": {"lr": 0.01, "weight_decay": 0.1},
    "maximize": {"lr": 0.01, "maximize": True},
    "all": {"lr": 0.02, "betas": (0.3, 0.95), "eps": 1e-4, "weight_decay": 0.05,
            "maximize": True},
}


NADAM_CONFIGS = {
    "default": {},
    "betas_lr": {"lr": 0.01, "betas": (0.5, 0.9)},
    "momentum_decay": {"lr": 0.01, "momentum_decay": 0.1},
    "no_momentum_decay": {"lr": 0.01, "momentum_decay": 0.0},
    "eps": {"lr": 0.01, "eps": 1e-3},
    "weight_decay": {"lr": 0.01, "weight_decay": 0.1},
    "decoupled": {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
    "maximize": {"lr": 0.01, "maximize": True},
    "all": {"lr": 0.02, "betas": (0.8, 0.99), "weight_decay": 0.05, "momentum_decay": 0.01,
            "decoupled_weight_decay": True, "maximize": True},
}


RADAM_CONFIGS = {
    "default": {},
    "betas_lr": {"lr": 0.01, "betas": (0.5, 0.9)},  # rho_t > 5 from step 7: both branches
    "never_rectified": {"lr": 0.01, "betas": (0.9, 0.6)},  # rho_inf = 4: never > 5
    "eps": {"lr": 0.01, "eps": 1e-3, "betas": (0.9, 0.8)},
    "weight_decay": {"lr": 0.01, "weight_decay": 0.1, "betas": (0.9, 0.8)},
    "decoupled": {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True,
                  "betas": (0.9, 0.8)},
    "maximize": {"lr": 0.01, "maximize": True, "betas": (0.9, 0.8)},
    "all": {"lr": 0.02, "betas": (0.7, 0.85), "eps": 1e-4, "weight_decay": 0.05,
            "decoupled_weight_decay": True, "maximize": True},
}


ASGD_CONFIGS = {
    "default": {},
    "averaging_from_step_10": {"lr": 0.05, "t0": 10},
    "lambd_alpha": {"lr": 0.05, "lambd": 0.1, "alpha": 0.5, "t0": 5},
    "weight_decay": {"lr": 0.05, "weight_decay": 0.1, "t0": 20},
    "maximize": {"lr": 0.01, "maximize": True, "t0": 3},
    "all": {"lr": 0.03, "lambd": 0.01, "alpha": 0.9, "t0": 0, "weight_decay": 0.05,
            "maximize": True},
}


RPROP_CONFIGS = {
    "default": {},
    "lr": {"lr": 0.1},
    "etas": {"etas": (0.3, 1.5)},
    "step_sizes": {"lr": 0.05, "step_sizes": (1e-2, 0.2)},
    "maximize": {"maximize": True},
    "all": {"lr": 0.02, "etas": (0.6, 1.1), "step_sizes": (1e-3, 1.0), "maximize": True},
}
