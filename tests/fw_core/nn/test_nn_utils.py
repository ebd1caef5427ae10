"""nn.utils against PyTorch: parameters_to_vector / vector_to_parameters, parametrize
(register, chains, right_inverse on assignment, several originals, cached, remove, state-dict
keys loading torch's), parametrizations.weight_norm and the older weight_norm hook."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn
from fw_core.nn.utils import parametrize

from .layer_check import check_layer, copy_weights

rng = np.random.default_rng(0)


def test_parameters_to_vector_and_back():
    ours, theirs = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    copy_weights(ours, theirs)
    vec = nn.utils.parameters_to_vector(ours.parameters())
    vec_t = torch.nn.utils.parameters_to_vector(theirs.parameters())
    np.testing.assert_allclose(vec.detach().numpy(), vec_t.detach().numpy())
    vec.sum().backward()
    assert (ours.weight.grad.numpy() == 1).all()
    new = rng.standard_normal(8).astype(np.float32)
    nn.utils.vector_to_parameters(fw.tensor(new), ours.parameters())
    torch.nn.utils.vector_to_parameters(torch.from_numpy(new), theirs.parameters())
    np.testing.assert_array_equal(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    np.testing.assert_array_equal(ours.bias.detach().numpy(), new[6:])
    with pytest.raises(TypeError, match="expected fw.Tensor"):
        nn.utils.vector_to_parameters(new, ours.parameters())


class _Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(-1, -2)

    def right_inverse(self, a):
        return a.triu()


class _TorchSymmetric(torch.nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(-1, -2)

    def right_inverse(self, a):
        return a.triu()


class _Scale(nn.Module):
    def forward(self, x):
        return 2.0 * x


class _TorchScale(torch.nn.Module):
    def forward(self, x):
        return 2.0 * x


def _symmetric_pair(chain=False):
    ours, theirs = nn.Linear(4, 4), torch.nn.Linear(4, 4)
    parametrize.register_parametrization(ours, "weight", _Symmetric())
    torch.nn.utils.parametrize.register_parametrization(theirs, "weight", _TorchSymmetric())
    if chain:
        parametrize.register_parametrization(ours, "weight", _Scale())
        torch.nn.utils.parametrize.register_parametrization(theirs, "weight", _TorchScale())
    return ours, theirs


@pytest.mark.parametrize("chain", [False, True])
def test_register_parametrization_matches_torch(chain):
    ours, theirs = _symmetric_pair(chain)
    assert type(ours).__name__ == "ParametrizedLinear"
    assert isinstance(ours, nn.Linear)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == \
        ["bias", "parametrizations.weight.original"]
    check_layer(ours, theirs, [rng.standard_normal((3, 4))])
    w = ours.weight.detach().numpy()
    np.testing.assert_allclose(w, w.T)
    assert parametrize.is_parametrized(ours) and parametrize.is_parametrized(ours, "weight")
    assert not parametrize.is_parametrized(ours, "bias")
    assert parametrize.type_before_parametrizations(ours) is nn.Linear


def test_assignment_goes_through_right_inverse():
    ours, theirs = _symmetric_pair()
    value = rng.standard_normal((4, 4)).astype(np.float32)
    value = value + value.T
    ours.weight = fw.tensor(value)
    theirs.weight = torch.from_numpy(value)
    np.testing.assert_allclose(ours.weight.detach().numpy(), value, atol=1e-6)
    np.testing.assert_allclose(ours.parametrizations.weight.original.detach().numpy(),
                               theirs.parametrizations.weight.original.detach().numpy())


def test_cached_computes_once():
    calls = []

    class Counting(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 1.0

    layer = nn.Linear(2, 2)
    parametrize.register_parametrization(layer, "weight", Counting())
    calls.clear()
    with parametrize.cached():
        a, b = layer.weight, layer.weight
    assert a is b and len(calls) == 1
    layer.weight  # noqa: B018 - outside the context: computed again
    assert len(calls) == 2


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    ours, theirs = _symmetric_pair()
    copy_weights(ours, theirs)
    original = ours.parametrizations.weight.original
    parametrize.remove_parametrizations(ours, "weight", leave_parametrized=leave)
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight", leave_parametrized=leave)
    assert type(ours) is nn.Linear and not parametrize.is_parametrized(ours)
    assert ours.weight is original  # the same Parameter: optimizers keep stepping it
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    with pytest.raises(ValueError, match="does not have a parametrization"):
        parametrize.remove_parametrizations(ours, "weight")


def test_registering_a_missing_tensor_or_a_shape_change_is_refused():
    class Flatten(nn.Module):
        def forward(self, x):
            return x.reshape(-1)

    with pytest.raises(ValueError, match="does not have a parameter"):
        parametrize.register_parametrization(nn.Linear(2, 2), "kernel", _Scale())
    with pytest.raises(RuntimeError, match="may not change"):
        parametrize.register_parametrization(nn.Linear(2, 2), "weight", Flatten())


@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrizations_weight_norm(dim):
    ours = nn.utils.parametrizations.weight_norm(nn.Linear(3, 5), dim=dim)
    theirs = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(3, 5), dim=dim)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == \
        ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    with torch.no_grad():
        theirs.parametrizations.weight.original0.mul_(1.5)
    check_layer(ours, theirs, [rng.standard_normal((2, 3))], dtype="float64")
    nn.utils.parametrize.remove_parametrizations(ours, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight")
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               atol=1e-12)


def test_parametrizations_weight_norm_starts_at_the_same_weight():
    layer = nn.Conv2d(2, 3, 3)
    before = layer.weight.detach().numpy().copy()
    nn.utils.parametrizations.weight_norm(layer)
    assert tuple(layer.parametrizations.weight.original0.shape) == (3, 1, 1, 1)
    np.testing.assert_allclose(layer.weight.detach().numpy(), before, atol=1e-6)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_old_weight_norm_hook(dim):
    ours = nn.utils.weight_norm(nn.Linear(3, 5), dim=dim)
    theirs = torch.nn.utils.weight_norm(torch.nn.Linear(3, 5), dim=dim)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == \
        ["bias", "weight_g", "weight_v"]
    with torch.no_grad():
        theirs.weight_g.mul_(0.5)
    check_layer(ours, theirs, [rng.standard_normal((2, 3))], dtype="float64")
    with pytest.raises(RuntimeError, match="two weight_norm hooks"):
        nn.utils.weight_norm(ours)
    nn.utils.remove_weight_norm(ours)
    torch.nn.utils.remove_weight_norm(theirs)
    assert list(ours.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               atol=1e-12)
    assert not ours._forward_pre_hooks
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(ours)


def test_norm_except_dim_matches_torch():
    from fw_core.nn.utils.weight_norm import norm_except_dim

    v = rng.standard_normal((3, 4, 2))
    for dim in (0, 1, 2, -1):
        np.testing.assert_allclose(norm_except_dim(fw.tensor(v), 2, dim).numpy(),
                                   torch.norm_except_dim(torch.from_numpy(v), 2, dim).numpy(),
                                   atol=1e-12)
    w = rng.standard_normal(4)
    np.testing.assert_allclose(norm_except_dim(fw.tensor(w), 2, 0).numpy(),
                               torch.norm_except_dim(torch.from_numpy(w), 2, 0).numpy())


# -- load_state_dict pre-hooks, and old weight_norm checkpoints into the new one ------------------
def test_an_old_weight_norm_state_dict_loads_into_the_parametrized_one_as_in_torch():
    old = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3))  # weight_g, weight_v (deprecated)
    saved = {k: v.detach().numpy() for k, v in old.state_dict().items()}
    assert {"weight_g", "weight_v"} <= set(saved)
    theirs = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(4, 3))
    theirs.load_state_dict({k: torch.tensor(v) for k, v in saved.items()})
    ours = fw.nn.utils.parametrizations.weight_norm(fw.nn.Linear(4, 3))
    ours.load_state_dict({k: fw.tensor(v) for k, v in saved.items()})
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(ours(fw.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    assert "weight_g" in saved  # the caller's dict is not renamed in place


def test_load_state_dict_pre_hooks_see_each_modules_prefix_and_can_fail_the_load():
    seen = []

    def rename(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        seen.append((type(module).__name__, prefix, strict))
        if f"{prefix}w" in state_dict:
            state_dict[f"{prefix}weight"] = state_dict.pop(f"{prefix}w")

    model = fw.nn.Sequential(fw.nn.Linear(2, 2, bias=False))
    handle = model[0].register_load_state_dict_pre_hook(rename)
    model.load_state_dict({"0.w": fw.ones(2, 2)})
    assert seen == [("Linear", "0.", True)]
    np.testing.assert_array_equal(model[0].weight.detach().numpy(), np.ones((2, 2)))
    handle.remove()
    with pytest.raises(fw.errors.StateDictError, match="unexpected keys: 0.w"):
        model.load_state_dict({"0.w": fw.ones(2, 2)})

    model[0]._register_load_state_dict_pre_hook(
        lambda state_dict, prefix, *rest: rest[-1].append(f"{prefix}: refused"))
    with pytest.raises(fw.errors.StateDictError, match="0.: refused"):
        model.load_state_dict(model.state_dict())
