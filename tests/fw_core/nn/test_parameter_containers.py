"""ParameterList and ParameterDict as PyTorch's: registration, state-dict keys (loading a torch
state dict), list and dict behaviour, tensors wrapped as Parameters, repr, errors."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn
from fw_core.errors import MissingKeyError


class _Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = nn.ParameterList([nn.Parameter(fw.randn(2, 3)),
                                         nn.Parameter(fw.randn(3))])
        self.extra = nn.ParameterDict({"scale": nn.Parameter(fw.ones(3)),
                                       "shift": nn.Parameter(fw.zeros(2, 2))})


class _TorchModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(2, 3)),
                                               torch.nn.Parameter(torch.randn(3))])
        self.extra = torch.nn.ParameterDict({"scale": torch.nn.Parameter(torch.ones(3)),
                                             "shift": torch.nn.Parameter(torch.zeros(2, 2))})


def test_state_dict_keys_match_and_a_torch_state_dict_loads():
    ours, theirs = _Model(), _TorchModel()
    assert list(ours.state_dict()) == list(theirs.state_dict()) == \
        ["weights.0", "weights.1", "extra.scale", "extra.shift"]
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    np.testing.assert_array_equal(ours.weights[0].detach().numpy(),
                                  theirs.weights[0].detach().numpy())
    assert len(list(ours.parameters())) == 4


def test_parameter_list_behaves_as_a_list():
    params = nn.ParameterList()
    params.append(fw.ones(2))  # a tensor is wrapped in a Parameter, as torch
    params.extend([nn.Parameter(fw.zeros(3))])
    params += [fw.ones(1)]
    assert len(params) == 3 and isinstance(params[0], nn.Parameter)
    assert params[0].requires_grad and params[-1].shape == (1,)
    assert isinstance(params[1:], nn.ParameterList) and len(params[1:]) == 2
    params[0] = fw.full((2,), 5.0)
    assert params[0].detach().numpy().tolist() == [5.0, 5.0]
    assert [tuple(p.shape) for p in params] == [(2,), (3,), (1,)]
    params.append(3)  # non-tensors are kept, not registered
    assert params[3] == 3 and len(list(params.parameters())) == 3
    with pytest.raises(IndexError):
        params[4]


def test_parameter_dict_behaves_as_a_dict():
    params = nn.ParameterDict({"a": fw.ones(2)})
    params["b"] = nn.Parameter(fw.zeros(1))
    params.update([("c", fw.ones(3))])
    assert list(params) == params.keys() == ["a", "b", "c"]
    assert isinstance(params["a"], nn.Parameter) and "b" in params and len(params) == 3
    assert params.get("z") is None and params.setdefault("d", fw.ones(1)).shape == (1,)
    assert params.pop("d").shape == (1,) and "d" not in params
    key, value = params.popitem()
    assert key == "c" and value.shape == (3,)
    del params["b"]
    assert list(dict(params.named_parameters())) == ["a"]
    merged = params | nn.ParameterDict({"e": fw.ones(1)})
    assert merged.keys() == ["a", "e"] and merged["a"] is params["a"]
    with pytest.raises(MissingKeyError, match="no entry 'zz'"):
        params["zz"]
    with pytest.raises(TypeError, match="keys must be strings"):
        params[1] = fw.ones(1)
    params.clear()
    assert len(params) == 0 and not list(params.parameters())


def test_optimizer_steps_the_registered_parameters():
    model = _Model()
    before = model.extra["scale"].detach().numpy().copy()
    opt = fw.optim.SGD(model.parameters(), lr=0.5)
    (model.extra["scale"].sum() + model.weights[1].sum()).backward()
    opt.step()
    np.testing.assert_allclose(model.extra["scale"].detach().numpy(), before - 0.5)


def test_repr():
    params = nn.ParameterList([nn.Parameter(fw.ones(2, 3))])
    assert repr(params) == "ParameterList(\n    (0): Parameter containing: [fw.float32 of size " \
        "2x3]\n)"
    assert repr(nn.ParameterList()) == repr(torch.nn.ParameterList())
