"""Module itself: provenance paths, hooks, traversal, modes, conversion, state dicts, repr."""

import copy
import pickle

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn
from fw_core.errors import ShapeError, StateDictError


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear1 = nn.Linear(4, 8)
        self.linear2 = nn.Linear(8, 4)

    def forward(self, x):
        return self.linear2(fw.relu(self.linear1(x)))


class Encoder(nn.Module):
    def __init__(self, layers=2):
        super().__init__()
        self.layers = nn.ModuleList(Block() for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.encoder(x))


# -- provenance -------------------------------------------------------------------------------
def test_tensors_record_the_module_path_of_nested_modules():
    model = Model()
    seen = {}
    model.encoder.layers[0].linear1.register_forward_hook(
        lambda m, args, out: seen.setdefault("linear1", out))
    x = fw.randn(3, 4, requires_grad=True)
    out = model(x)
    assert seen["linear1"].module == "encoder.layers.0.linear1"
    assert seen["linear1"].grad_fn.module == "encoder.layers.0.linear1"
    assert out.module == "head"
    assert x.module == ""


def test_ops_in_a_forward_body_record_the_enclosing_module():
    model = Model()
    seen = {}
    model.encoder.layers[1].linear2.register_forward_pre_hook(
        lambda m, args: seen.setdefault("relu", args[0]))
    model(fw.randn(2, 4))
    assert seen["relu"].op == "relu"
    assert seen["relu"].module == "encoder.layers.1"


def test_paths_follow_the_module_tree_and_the_state_dict_names():
    model = Model()
    assert [p for p, _ in model.named_modules()] == [
        "", "encoder", "encoder.layers", "encoder.layers.0", "encoder.layers.0.linear1",
        "encoder.layers.0.linear2", "encoder.layers.1", "encoder.layers.1.linear1",
        "encoder.layers.1.linear2", "head"]
    for path, module in model.named_modules():
        assert module.path == path
    assert "encoder.layers.1.linear2.bias" in model.state_dict()


def test_paths_update_when_a_module_is_moved():
    model = Model()
    block = model.encoder.layers[1]
    model.extra = block
    del model.encoder.layers[1]
    assert model.extra.path == "extra"
    assert block.linear1.path == "extra.linear1"


def test_deepcopy_and_pickle_keep_paths_and_copy_parameters():
    model = Model()
    clone = copy.deepcopy(model)
    assert clone.encoder.layers[1].linear1.path == "encoder.layers.1.linear1"
    assert clone.head.weight is not model.head.weight
    np.testing.assert_array_equal(clone.head.weight.detach().numpy(),
                                  model.head.weight.detach().numpy())
    restored = pickle.loads(pickle.dumps(model))
    assert restored.encoder.layers[0].linear2.path == "encoder.layers.0.linear2"
    x = fw.randn(2, 4)
    np.testing.assert_allclose(restored(x).detach().numpy(), model(x).detach().numpy())


# -- hooks ------------------------------------------------------------------------------------
def test_hooks_can_replace_inputs_and_outputs_and_be_removed():
    layer = nn.Identity()
    pre = layer.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    post = layer.register_forward_hook(lambda m, args, out: out + 1)
    assert layer(fw.tensor([1.0])).tolist() == [3.0]
    pre.remove()
    assert layer(fw.tensor([1.0])).tolist() == [2.0]
    post.remove()
    assert layer(fw.tensor([1.0])).tolist() == [1.0]


# -- traversal, modes, conversion ---------------------------------------------------------------
def test_shared_parameters_are_listed_once():
    shared = nn.Linear(3, 3)
    model = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(model.parameters())) == 2
    assert model.num_parameters() == 12


def test_train_and_eval_reach_every_descendant():
    model = Model()
    model.eval()
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())


def test_to_double_keeps_parameter_identity_and_integer_buffers():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    weight = model[0].weight
    model.to(fw.float64)
    assert model[0].weight is weight and weight.dtype == fw.float64
    assert model[1].running_mean.dtype == fw.float64
    assert model[1].num_batches_tracked.dtype == fw.int64
    assert model(fw.randn(5, 3, dtype=fw.float64)).dtype == fw.float64


def test_zero_grad_clears_gradients():
    model = Model()
    model(fw.randn(2, 4)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_requires_grad_false_freezes_parameters():
    model = Model()
    model.encoder.requires_grad_(False)
    assert model.num_parameters(trainable_only=True) == model.head.num_parameters()


# -- state dicts --------------------------------------------------------------------------------
def test_state_dict_round_trip_between_models():
    a, b = Model(), Model()
    b.load_state_dict(a.state_dict())
    x = fw.randn(2, 4)
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())


def test_state_dict_names_match_torch_for_the_same_architecture():
    ours = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                 torch.nn.ReLU(), torch.nn.Linear(4, 2))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    np.testing.assert_array_equal(ours[3].weight.detach().numpy(), theirs[3].weight.detach())


def test_load_state_dict_lists_missing_unexpected_and_misshaped_keys():
    model = Model()
    state = model.state_dict()
    state.pop("head.bias")
    state["head.extra"] = fw.zeros(1)
    state["encoder.layers.0.linear1.weight"] = fw.zeros(3, 3)
    with pytest.raises(StateDictError) as info:
        model.load_state_dict(state)
    message = str(info.value)
    assert "missing keys: head.bias" in message
    assert "unexpected keys: head.extra" in message
    assert "encoder.layers.0.linear1.weight: checkpoint (3, 3) vs model (8, 4)" in message
    assert "strict=False" in message


def test_non_strict_loading_reports_the_key_differences():
    model = Model()
    state = model.state_dict()
    state.pop("head.bias")
    state["other"] = fw.zeros(1)
    result = model.load_state_dict(state, strict=False)
    assert result.missing_keys == ["head.bias"]
    assert result.unexpected_keys == ["other"]


# -- errors and repr ----------------------------------------------------------------------------
def test_shape_errors_name_the_module_path_and_the_fix():
    model = Model()
    with pytest.raises(ShapeError) as info:
        model.head(fw.randn(2, 5))
    message = str(info.value)
    assert "in_features=4" in message and "(2, 5)" in message
    assert "in module: head" in message
    assert "fix:" in message


def test_repr_is_a_tree_with_settings_and_parameter_counts():
    text = repr(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Sequential(nn.Linear(8, 2))))
    assert text == (
        "Sequential(  # 58 params\n"
        "  (0): Linear(in_features=4, out_features=8, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Sequential(  # 18 params\n"
        "    (0): Linear(in_features=8, out_features=2, bias=True)\n"
        "  )\n"
        ")")
