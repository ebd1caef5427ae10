"""skip_init builds a module without drawing initial values; load_state_dict(assign=True)
hands each parameter the state dict's storage instead of copying into it."""

from __future__ import annotations

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import ArgumentTypeError


def test_skip_init_draws_no_random_values_and_builds_the_same_module():
    fw.manual_seed(0)
    first = fw.rand(4).numpy()
    fw.manual_seed(0)
    layer = fw.nn.utils.skip_init(fw.nn.Linear, 5, 3)
    assert np.array_equal(fw.rand(4).numpy(), first)  # nothing was drawn
    assert layer.weight.shape == (3, 5) and layer.bias.shape == (3,)
    assert isinstance(layer.weight, fw.nn.Parameter) and layer.weight.requires_grad
    fw.nn.init.ones_(layer.weight)  # initialisers work again afterwards
    assert (layer.weight.detach().numpy() == 1).all()


def test_skip_init_refuses_what_is_not_a_module_class():
    with pytest.raises(ArgumentTypeError, match="Module class"):
        fw.nn.utils.skip_init(fw.nn.Linear(2, 2))


def test_assign_shares_the_state_dicts_storage_and_keeps_the_parameters():
    net = fw.nn.Sequential(fw.nn.Linear(4, 2), fw.nn.BatchNorm1d(2))
    weight = net[0].weight
    state = {k: fw.tensor(np.full(v.shape, 2.0, np.float32)) for k, v in net.state_dict().items()
             if v.is_floating_point()}
    state["1.num_batches_tracked"] = fw.tensor(7)
    net.load_state_dict(state, assign=True)
    assert net[0].weight is weight and weight.requires_grad  # identity and flags kept
    assert np.shares_memory(weight.detach().numpy(), state["0.weight"].numpy())
    assert int(net[1].num_batches_tracked.item()) == 7
    with fw.no_grad():
        out = net.eval()(fw.ones(1, 4))
    np.testing.assert_allclose(out.numpy(), (2 * 4 + 2 - 2) / np.sqrt(2 + 1e-5) * 2 + 2,
                               rtol=1e-6)


def test_assign_takes_the_state_dicts_dtype_and_copy_keeps_the_modules():
    layer = fw.nn.Linear(2, 2)
    state = {"weight": fw.ones(2, 2, dtype=fw.float64), "bias": fw.zeros(2, dtype=fw.float64)}
    layer.load_state_dict(state)
    assert layer.weight.dtype == fw.float32
    layer.load_state_dict(state, assign=True)
    assert layer.weight.dtype == fw.float64
