"""What every optimizer shares: groups, state dicts, zero_grad, closures, in-place updates, and
errors that say what to fix."""

import copy
import pickle

import numpy as np
import pytest

import fw_core as fw
import fw_core.optim as optim
from fw_core.errors import DTypeError, FwError, ShapeError, StateDictError
from fw_core.optim import ArgumentError

from .reference import (
    ADADELTA_CONFIGS,
    ADAGRAD_CONFIGS,
    ADAM_CONFIGS,
    ADAMAX_CONFIGS,
    ADAMW_CONFIGS,
    ASGD_CONFIGS,
    NADAM_CONFIGS,
    RADAM_CONFIGS,
    RMSPROP_CONFIGS,
    RPROP_CONFIGS,
    SGD_CONFIGS,
    FwRun,
    initial,
)

ALL_CONFIGS = [(name, config) for name, configs in (
    ("SGD", SGD_CONFIGS), ("Adam", ADAM_CONFIGS), ("AdamW", ADAMW_CONFIGS),
    ("RMSprop", RMSPROP_CONFIGS), ("Adagrad", ADAGRAD_CONFIGS), ("Adadelta", ADADELTA_CONFIGS),
    ("Adamax", ADAMAX_CONFIGS), ("NAdam", NADAM_CONFIGS), ("RAdam", RADAM_CONFIGS),
    ("ASGD", ASGD_CONFIGS), ("Rprop", RPROP_CONFIGS)) for config in configs.values()]


def _param(values=(1.0, -2.0, 3.0), dtype=fw.float64):
    return fw.tensor(list(values), dtype=dtype, requires_grad=True)


# -- state dicts ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name,kwargs", ALL_CONFIGS)
@pytest.mark.parametrize("how", ["direct", "pickled"])
def test_state_dict_round_trip_resumes_identically(name, kwargs, how):
    """20 steps, save, a fresh optimizer loads it, 30 more == 50 uninterrupted, bit for bit."""
    whole = FwRun(name, kwargs, initial(np.float64))
    for t in range(50):
        whole.step(t)
    first = FwRun(name, kwargs, initial(np.float64))
    for t in range(20):
        first.step(t)
    saved = first.opt.state_dict()
    if how == "pickled":
        saved = pickle.loads(pickle.dumps(saved))
    second = FwRun(name, kwargs, first.values())
    second.opt.load_state_dict(saved)
    for t in range(20, 50):
        second.step(t)
    for a, b in zip(second.values(), whole.values()):
        np.testing.assert_array_equal(a, b)


def test_state_dict_layout_and_tensors():
    a, b = _param(), _param((4.0,))
    opt = optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    a.grad = fw.ones_like(a)
    opt.step()
    saved = opt.state_dict()
    assert [g["params"] for g in saved["param_groups"]] == [[0], [1]]
    assert saved["param_groups"][1]["lr"] == 0.5 and saved["param_groups"][0]["lr"] == 0.1
    assert set(saved["state"]) == {0}  # b never had a gradient: no state
    assert all(isinstance(v, fw.Tensor) for v in saved["state"][0].values())


def test_loaded_state_is_a_copy_cast_to_the_parameter_dtype():
    p64 = _param()
    opt = optim.SGD([p64], lr=0.1, momentum=0.9)
    p64.grad = fw.ones_like(p64)
    opt.step()
    saved = opt.state_dict()
    p32 = _param(dtype=fw.float32)
    other = optim.SGD([p32], lr=0.1, momentum=0.9)
    other.load_state_dict(saved)
    buf = other.state[p32]["momentum_buffer"]
    assert buf.dtype is fw.float32
    p32.grad = fw.ones_like(p32)
    other.step()
    assert saved["state"][0]["momentum_buffer"].tolist() == [1.0, 1.0, 1.0]  # not aliased


def test_deepcopy_of_state_dict_is_a_snapshot():
    p = _param()
    opt = optim.Adam([p])
    p.grad = fw.ones_like(p)
    opt.step()
    snapshot = copy.deepcopy(opt.state_dict())
    opt.step()
    assert float(snapshot["state"][0]["step"]) == 1.0
    assert float(opt.state[p]["step"]) == 2.0


def test_load_state_dict_errors_name_the_mismatch_and_the_fix():
    a, b = _param(), _param()
    two_groups = optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).state_dict()
    with pytest.raises(StateDictError, match="2 parameter group") as err:
        optim.SGD([_param()], lr=0.1).load_state_dict(two_groups)
    assert "fix:" in str(err.value)
    with pytest.raises(StateDictError, match="2 parameters here but 1"):
        optim.SGD([{"params": [_param(), _param()]}, {"params": [_param()]}],
                  lr=0.1).load_state_dict(two_groups)
    sgd_state = optim.SGD([a], lr=0.1).state_dict()
    with pytest.raises(StateDictError, match="another optimizer class"):
        optim.Adam([a]).load_state_dict(sgd_state)
    with pytest.raises(StateDictError, match="'state' and 'param_groups'"):
        optim.SGD([a], lr=0.1).load_state_dict({"weight": a})
    with pytest.raises(StateDictError, match="list of dicts"):
        optim.SGD([a], lr=0.1).load_state_dict({"state": {}, "param_groups": [[0]]})
    momentum = optim.SGD([a], lr=0.1, momentum=0.9)
    a.grad = fw.ones_like(a)
    momentum.step()
    with pytest.raises(StateDictError, match=r"shape \(3,\).*shape \(2,\)"):
        optim.SGD([_param((1.0, 2.0))], lr=0.1, momentum=0.9).load_state_dict(
            momentum.state_dict())


def test_a_step_saved_as_a_number_is_restored_as_a_counter():
    p = _param()
    opt = optim.Adam([p])
    p.grad = fw.ones_like(p)
    opt.step()
    saved = opt.state_dict()
    saved["state"][0]["step"] = 5
    opt.load_state_dict(saved)
    opt.step()
    assert float(opt.state[p]["step"]) == 6.0 and opt.state[p]["step"].dtype is fw.float32


def test_adamw_stays_decoupled_after_loading_an_adam_state_dict():
    p = _param()
    saved = optim.Adam([p], weight_decay=0.1).state_dict()
    opt = optim.AdamW([p])
    opt.load_state_dict(saved)
    assert opt.param_groups[0]["decoupled_weight_decay"] is True
    assert opt.param_groups[0]["weight_decay"] == 0.1


# -- parameters and groups ------------------------------------------------------------------------
def test_update_is_in_place_keeps_identity_and_bumps_version():
    p = _param()
    storage = p._data
    version = p._version
    opt = optim.Adam([p], lr=0.1)
    p.grad = fw.ones_like(p)
    opt.step()
    assert p._data is storage and p._version == version + 1
    assert np.allclose(p.detach().numpy(), [0.9, -2.1, 2.9])


def test_backward_through_a_value_the_step_changed_fails_loudly():
    p = _param()
    opt = optim.SGD([p], lr=0.1)
    y = p * p  # saves p for backward
    p.grad = fw.ones_like(p)
    opt.step()
    with pytest.raises(fw.errors.AutogradError, match="version"):
        y.backward(fw.ones_like(y))


def test_parameters_without_grad_are_skipped():
    a, b = _param(), _param()
    opt = optim.SGD([a, b], lr=0.1, momentum=0.9)
    a.grad = fw.ones_like(a)
    opt.step()
    assert b.tolist() == [1.0, -2.0, 3.0] and b not in opt.state
    assert "momentum_buffer" in opt.state[a]


def test_named_parameters_keep_their_names():
    a, b = _param(), _param()
    opt = optim.SGD([("fc.weight", a), ("fc.bias", b)], lr=0.1)
    first, second = opt.param_groups[0]["params"]
    assert first is a and second is b
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["fc.weight", "fc.bias"]
    with pytest.raises(ArgumentError, match="with names and some without"):
        optim.SGD([("w", a), b], lr=0.1)


def test_add_param_group_uses_defaults_and_steps():
    a, b = _param(), _param()
    opt = optim.SGD([a], lr=0.1, momentum=0.5)
    opt.add_param_group({"params": b, "lr": 1.0})
    assert opt.param_groups[1]["momentum"] == 0.5 and opt.param_groups[1]["lr"] == 1.0
    b.grad = fw.ones_like(b)
    opt.step()
    assert b.tolist() == [0.0, -3.0, 2.0]
    with pytest.raises(ArgumentError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ArgumentError, match="invalid lr"):
        opt.add_param_group({"params": [_param()], "lr": -1.0})


def test_zero_grad_to_none_or_to_zero_in_place():
    p = _param()
    opt = optim.SGD([p], lr=0.1)
    p.grad = fw.ones_like(p)
    grad = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is grad and grad.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_closure_runs_with_grad_and_its_loss_is_returned():
    p = _param((3.0,))
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = p * p
        loss.backward(fw.ones_like(loss))
        return loss

    with fw.no_grad():
        loss = opt.step(closure)
    assert loss.tolist() == [9.0] and p.tolist() == [1.5]


def test_trains_a_quadratic_through_autograd():
    target = fw.tensor([1.0, -1.0, 0.5], dtype=fw.float64)
    p = _param((0.0, 0.0, 0.0))
    opt = optim.Adam([p], lr=0.1)
    for _ in range(300):
        opt.zero_grad()
        diff = p - target
        (diff * diff).backward(fw.ones_like(diff))
        opt.step()
    np.testing.assert_allclose(p.detach().numpy(), target.numpy(), atol=1e-3)


def test_repr_lists_each_group():
    text = repr(optim.SGD([_param()], lr=0.1, momentum=0.9))
    assert text.startswith("SGD (") and "Parameter Group 0" in text and "momentum: 0.9" in text


# -- errors ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("build,match", [
    (lambda p: optim.SGD(p, lr=-0.1), "invalid lr=-0.1"),
    (lambda p: optim.SGD(p, lr=float("nan")), "invalid lr=nan"),
    (lambda p: optim.SGD(p, lr="0.1"), "lr must be a number"),
    (lambda p: optim.SGD(p, lr=fw.tensor(0.1)), "lr must be a number"),
    (lambda p: optim.SGD(p, lr=0.1, momentum=-0.9), "invalid momentum"),
    (lambda p: optim.SGD(p, lr=0.1, weight_decay=-1.0), "invalid weight_decay"),
    (lambda p: optim.SGD(p, lr=0.1, nesterov=True), "Nesterov momentum needs momentum > 0"),
    (lambda p: optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True),
     "dampening 0"),
    (lambda p: optim.Adam(p, betas=(1.0, 0.999)), r"invalid betas\[0\]=1.0"),
    (lambda p: optim.Adam(p, betas=(0.9, -0.1)), r"invalid betas\[1\]=-0.1"),
    (lambda p: optim.Adam(p, betas=0.9), "betas must be a pair"),
    (lambda p: optim.AdamW(p, eps=-1e-8), "invalid eps"),
    (lambda p: optim.RMSprop(p, alpha=-0.5), "invalid alpha"),
    (lambda p: optim.Adagrad(p, lr_decay=-0.1), "invalid lr_decay"),
    (lambda p: optim.Adagrad(p, initial_accumulator_value=-1.0),
     "invalid initial_accumulator_value"),
])
def test_bad_hyperparameters_are_refused_with_a_fix(build, match):
    with pytest.raises(ArgumentError, match=match) as err:
        build([_param()])
    assert isinstance(err.value, ValueError)


def test_bad_parameter_lists_are_refused():
    p = _param()
    with pytest.raises(ArgumentError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(FwError, match="wrap it in a list"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(ArgumentError, match="set"):
        optim.SGD([{"params": {p}}], lr=0.1)
    with pytest.raises(ArgumentError, match="same parameter twice"):
        optim.SGD([p, p], lr=0.1)
    with pytest.raises(FwError, match="not a leaf"):
        optim.SGD([p * 2], lr=0.1)
    with pytest.raises(FwError, match="not a Tensor"):
        optim.SGD([np.ones(3)], lr=0.1)


def test_parameter_that_does_not_require_grad_is_accepted_as_in_torch():
    frozen = fw.tensor([1.0, 2.0])
    opt = optim.SGD([frozen], lr=0.1)
    opt.step()  # no gradient: nothing happens
    assert frozen.tolist() == [1.0, 2.0]


def test_gradient_that_does_not_fit_its_parameter_is_refused_at_step():
    p = _param()
    opt = optim.Adam([p])
    p.grad = fw.ones(1, dtype=fw.float64)
    with pytest.raises(ShapeError, match=r"gradient of shape \(1,\)"):
        opt.step()
    p.grad = fw.ones(3, dtype=fw.float32)
    with pytest.raises(DTypeError, match="float32 gradient"):
        opt.step()


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta",
                                  "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_float16_parameters_stay_float16(name):
    values = [0.5, -1.0, 2.0]
    half, double = _param(values, fw.float16), _param(values, fw.float64)
    opts = [getattr(optim, name)([p], lr=0.01) for p in (half, double)]
    for p, opt in zip((half, double), opts):
        for _ in range(3):
            p.grad = fw.tensor([1.0, -0.5, 0.25], dtype=p.dtype)
            opt.step()
    assert half.dtype is fw.float16 and all(v.dtype is fw.float16 for v in
                                             opts[0].state[half].values() if v.ndim)
    np.testing.assert_allclose(half.detach().numpy(), double.detach().numpy(), rtol=2e-3)
