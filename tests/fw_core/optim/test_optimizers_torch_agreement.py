"""Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop equal their torch.optim namesakes (2.13) step
for step, for every option combination torch documents; the implementation flags torch takes
(foreach, capturable, differentiable) are accepted and change nothing."""

import inspect

import numpy as np
import pytest

import fw_core as fw
import fw_core.optim as optim
from fw_core.optim import ArgumentError
from fw_core.optim.optimizer import IMPLEMENTATION_FLAGS

from .reference import (
    ADADELTA_CONFIGS,
    ADAMAX_CONFIGS,
    ASGD_CONFIGS,
    NADAM_CONFIGS,
    RADAM_CONFIGS,
    RPROP_CONFIGS,
    FwRun,
    TorchRun,
    assert_matches_torch,
    assert_same,
    run,
)

CONFIGS = {"Adadelta": ADADELTA_CONFIGS, "Adamax": ADAMAX_CONFIGS, "NAdam": NADAM_CONFIGS,
           "RAdam": RADAM_CONFIGS, "ASGD": ASGD_CONFIGS, "Rprop": RPROP_CONFIGS}
CASES = [(name, config) for name, configs in CONFIGS.items() for config in configs]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,config", CASES)
def test_matches_torch_for_50_steps(name, config, dtype):
    assert_matches_torch(name, CONFIGS[name][config], dtype)


GROUPS = {
    "Adadelta": [([0, 3], {"lr": 0.5, "rho": 0.8}), ([1, 2, 4], {"weight_decay": 0.2})],
    "Adamax": [([0, 3], {"lr": 0.02, "betas": (0.5, 0.9)}), ([1, 2, 4], {"eps": 1e-3})],
    "NAdam": [([0, 3], {"momentum_decay": 0.05}),
              ([1, 2, 4], {"weight_decay": 0.2, "decoupled_weight_decay": True})],
    "RAdam": [([0, 3], {"betas": (0.5, 0.9)}), ([1, 2, 4], {"weight_decay": 0.2})],
    "ASGD": [([0, 3], {"t0": 5}), ([1, 2, 4], {"lr": 0.02, "lambd": 0.01})],
    "Rprop": [([0, 3], {"etas": (0.4, 1.3)}), ([1, 2, 4], {"step_sizes": (1e-3, 0.1)})],
}


@pytest.mark.parametrize("name", list(GROUPS))
def test_param_groups_with_their_own_options_match_torch(name):
    assert_matches_torch(name, {"lr": 0.01}, np.float64, groups=GROUPS[name])


@pytest.mark.parametrize("name", [*CONFIGS, "SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_implementation_flags_are_accepted_and_change_nothing(name):
    """fw takes exactly the flags torch's class takes (foreach, fused, capturable,
    differentiable), and with all of them set gives torch's plain for-loop result."""
    torch = pytest.importorskip("torch")
    torch_takes = inspect.signature(getattr(torch.optim, name)).parameters
    fw_takes = inspect.signature(getattr(optim, name)).parameters
    flags = {k: True for k in IMPLEMENTATION_FLAGS if k in torch_takes}
    assert {k for k in IMPLEMENTATION_FLAGS if k in fw_takes} == set(flags)
    mine = run(FwRun, name, {"lr": 0.01, **flags}, np.float64, 30)
    theirs = run(TorchRun, name, {"lr": 0.01}, np.float64, 30)
    assert_same(mine.values(), theirs.values(), np.float64)
    assert all(mine.opt.param_groups[0][k] is True for k in flags)


def test_a_state_dict_saved_without_the_flags_still_loads():
    p = fw.zeros(2, requires_grad=True)
    saved = optim.Adam([p], lr=0.1).state_dict()
    for key in IMPLEMENTATION_FLAGS:
        del saved["param_groups"][0][key]
    opt = optim.Adam([p], lr=0.5)
    opt.load_state_dict(saved)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[0]["fused"] is None


REFUSED = [  # (optimizer, arguments, what fw's message says): torch raises ValueError for each
    ("Adadelta", {"rho": 1.5}, r"invalid rho=1.5: expected 0.0 <= rho <= 1.0"),
    ("Adadelta", {"rho": -0.1}, "invalid rho"),
    ("Adadelta", {"lr": -1.0}, "invalid lr"),
    ("Adadelta", {"eps": -1e-6}, "invalid eps"),
    ("Adadelta", {"weight_decay": -0.1}, "invalid weight_decay"),
    ("Adamax", {"betas": (0.9, 1.0)}, r"invalid betas\[1\]=1.0"),
    ("Adamax", {"eps": -1.0}, "invalid eps"),
    ("Adamax", {"lr": -1.0}, "invalid lr"),
    ("Adamax", {"weight_decay": -1.0}, "invalid weight_decay"),
    ("NAdam", {"momentum_decay": -4e-3}, "invalid momentum_decay"),
    ("NAdam", {"betas": (-0.1, 0.999)}, r"invalid betas\[0\]"),
    ("NAdam", {"weight_decay": -1.0}, "invalid weight_decay"),
    ("NAdam", {"eps": -1.0}, "invalid eps"),
    ("RAdam", {"betas": (1.0, 0.999)}, r"invalid betas\[0\]=1.0"),
    ("RAdam", {"lr": -1e-3}, "invalid lr"),
    ("RAdam", {"weight_decay": -1.0}, "invalid weight_decay"),
    ("ASGD", {"lr": -0.01}, "invalid lr"),
    ("ASGD", {"weight_decay": -0.01}, "invalid weight_decay"),
    ("Rprop", {"etas": (1.5, 1.2)}, r"expected 0 < etas\[0\] < 1 < etas\[1\]"),
    ("Rprop", {"etas": (0.5, 1.0)}, r"expected 0 < etas\[0\] < 1 < etas\[1\]"),
    ("Rprop", {"etas": (0.0, 1.2)}, r"expected 0 < etas\[0\] < 1 < etas\[1\]"),
    ("Rprop", {"lr": -0.01}, "invalid lr"),
    ("LBFGS", {"lr": -1.0}, "invalid lr"),
]


@pytest.mark.parametrize("name,kwargs,match", REFUSED)
def test_refuses_what_torch_refuses_with_a_fix(name, kwargs, match):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError):
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kwargs)
    with pytest.raises(ArgumentError, match=match) as err:
        getattr(optim, name)([fw.zeros(2, requires_grad=True)], **kwargs)
    assert isinstance(err.value, ValueError) and "fix:" in str(err.value)


@pytest.mark.parametrize("name,kwargs", [("Adadelta", {"rho": 1.0}), ("Adadelta", {"rho": 0.0}),
                                         ("ASGD", {"lambd": -1.0, "t0": -5}),
                                         ("Rprop", {"step_sizes": (1.0, 0.1)})])
def test_accepts_edge_values_torch_accepts(name, kwargs):
    torch = pytest.importorskip("torch")
    getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kwargs)
    getattr(optim, name)([fw.zeros(2, requires_grad=True)], **kwargs)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_a_compiled_train_step_captures_the_update(name):
    """fw.compile captures the update as a host step of the plan: the compiled train step
    leaves the same weights as the eager one."""
    models = []
    for _ in range(2):
        fw.manual_seed(0)
        models.append(fw.nn.Linear(4, 3))

    def make_step(model):
        opt = getattr(optim, name)(model.parameters(), lr=0.01)

        def step(x, y):
            opt.zero_grad()
            loss = fw.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            return loss
        return step

    compiled, eager = fw.compile(make_step(models[0])), make_step(models[1])
    for t in range(5):
        rng = np.random.default_rng(t)
        x = fw.tensor(rng.standard_normal((8, 4)).astype(np.float32))
        y = fw.tensor(rng.standard_normal((8, 3)).astype(np.float32))
        np.testing.assert_allclose(compiled(x, y).item(), eager(x, y).item(), rtol=1e-6)
    for (key, a), b in zip(models[0].state_dict().items(), models[1].state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, err_msg=key)
    # the replays ran the plan (the update inside it): were it skipped, the weights would differ
    assert compiled.counts["plan_calls"] >= 2, compiled.explain()
