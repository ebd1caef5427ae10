"""Sequential, ModuleList and ModuleDict: construction, indexing, mutation, names, torch parity."""

from collections import OrderedDict

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_core.nn as nn

from .layer_check import check_layer


def _mlp(lib):
    return lib.Sequential(lib.Linear(4, 8), lib.ReLU(), lib.Linear(8, 3), lib.Tanh())


def test_sequential_matches_torch():
    check_layer(_mlp(nn), _mlp(torch.nn), [np.random.default_rng(0).standard_normal((5, 4))])


def test_sequential_from_an_ordered_dict_keeps_names():
    seq = nn.Sequential(OrderedDict(fc=nn.Linear(2, 3), act=nn.ReLU()))
    assert list(seq.state_dict()) == ["fc.weight", "fc.bias"]
    assert isinstance(seq[1], nn.ReLU)
    assert seq.fc.path == "fc"


def test_sequential_indexing_slicing_and_length():
    seq = _mlp(nn)
    assert len(seq) == 4
    assert seq[-1] is list(seq)[3]
    head = seq[:2]
    assert isinstance(head, nn.Sequential) and len(head) == 2 and head[0] is seq[0]
    assert head(fw.randn(2, 4)).shape == (2, 8)
    with pytest.raises(IndexError):
        seq[4]


def test_sequential_mutation_renumbers_like_torch():
    seq = _mlp(nn)
    seq.append(nn.Identity())
    assert len(seq) == 5
    del seq[1]
    assert [name for name, _ in seq.named_children()] == ["0", "1", "2", "3"]
    seq.insert(1, nn.Sigmoid())
    assert isinstance(seq[1], nn.Sigmoid) and len(seq) == 5
    popped = seq.pop(1)
    assert isinstance(popped, nn.Sigmoid) and len(seq) == 4
    seq[0] = nn.Linear(4, 8, bias=False)
    assert seq[0].bias is None and seq[0].path == "0"
    seq.extend([nn.ReLU()])
    assert seq(fw.randn(2, 4)).shape == (2, 3)


def test_module_list_behaves_like_a_list_and_registers_children():
    layers = nn.ModuleList(nn.Linear(3, 3) for _ in range(2))
    layers.append(nn.ReLU())
    layers.extend([nn.Tanh()])
    layers.insert(0, nn.Identity())
    assert [type(m).__name__ for m in layers] == ["Identity", "Linear", "Linear", "ReLU", "Tanh"]
    assert list(layers.state_dict()) == ["1.weight", "1.bias", "2.weight", "2.bias"]
    del layers[0]
    assert list(layers.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert isinstance(layers[-1], nn.Tanh) and len(layers[1:3]) == 2
    layers += [nn.Sigmoid()]
    assert len(layers) == 5 and layers[4].path == "4"
    assert layers.pop() is not None and len(layers) == 4


def test_module_list_state_dict_matches_torch():
    ours = nn.ModuleList([nn.Linear(2, 3), nn.LayerNorm(3)])
    theirs = torch.nn.ModuleList([torch.nn.Linear(2, 3), torch.nn.LayerNorm(3)])
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_module_dict():
    heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "box": nn.Linear(4, 2)})
    heads["extra"] = nn.ReLU()
    assert list(heads) == ["cls", "box", "extra"] and "box" in heads and len(heads) == 3
    assert heads["box"].path == "box"
    assert list(heads.state_dict()) == ["cls.weight", "cls.bias", "box.weight", "box.bias"]
    heads.update([("cls", nn.Linear(4, 5))])
    assert heads["cls"].out_features == 5
    assert isinstance(heads.pop("extra"), nn.ReLU) and len(heads) == 2
    assert [k for k, _ in heads.items()] == list(heads.keys())
    heads.clear()
    assert len(heads) == 0


def test_nested_container_paths():
    model = nn.Sequential(nn.ModuleDict({"a": nn.ModuleList([nn.Linear(2, 2)])}))
    assert model[0]["a"][0].path == "0.a.0"
    out = model[0]["a"][0](fw.randn(1, 2))
    assert out.module == "0.a.0"


@pytest.mark.parametrize("make,where", [
    (lambda: nn.Sequential(nn.Linear(2, 2), 5), "entry 1 is int 5"),
    (lambda: nn.Sequential(OrderedDict(fc=nn.Linear(2, 2), act="relu")), "entry 'act' is str"),
    (lambda: nn.Sequential(nn.Linear(2, 2), fw.relu), "entry 1 is a function"),
    (lambda: nn.Sequential(nn.ReLU), "entry 0 is a class"),
    (lambda: nn.Sequential().append(5), "entry 0 is int 5"),
    (lambda: nn.ModuleList([nn.Linear(2, 2), 5]), "entry 1 is int 5"),
    (lambda: nn.ModuleList().insert(0, 1.0), "entry 0 is float 1.0"),
    (lambda: nn.ModuleDict({"a": 5}), "entry 'a' is int 5")])
def test_containers_refuse_what_is_not_a_module(make, where):
    # Sequential(Linear(2, 2), 5) used to drop the 5 and run as Sequential(Linear(2, 2))
    with pytest.raises(TypeError, match=where) as info:
        make()
    assert isinstance(info.value, fw.errors.ArgumentTypeError)
    assert "not a Module" in str(info.value) and "\n  fix:" in str(info.value)


def test_container_item_assignment_refuses_non_modules():
    seq, mods = nn.Sequential(nn.ReLU()), nn.ModuleList([nn.ReLU()])
    with pytest.raises(fw.errors.ArgumentTypeError, match="entry 0 is int 3"):
        seq[0] = 3
    with pytest.raises(fw.errors.ArgumentTypeError, match="entry 0 is int 3"):
        mods[0] = 3
    assert len(seq) == len(mods) == 1 and isinstance(seq[0], nn.ReLU)


def test_module_dict_keys_must_be_names():
    with pytest.raises(TypeError, match="keys must be strings, got int 1"):
        nn.ModuleDict({1: nn.ReLU()})
    with pytest.raises(ValueError, match="cannot be a module name"):
        nn.ModuleDict({"a.b": nn.ReLU()})
    heads = nn.ModuleDict({"cls": nn.ReLU()})
    with pytest.raises(KeyError, match="no entry 'box'") as info:
        heads["box"]
    assert "use one of its keys: 'cls'" in str(info.value)


def test_out_of_range_index_names_the_container():
    with pytest.raises(IndexError, match="index 3 is out of range for a Sequential of 1") as info:
        nn.Sequential(nn.ReLU())[3]
    assert isinstance(info.value, fw.errors.IndexOutOfRangeError)
    with pytest.raises(IndexError, match="the ModuleList is empty"):
        nn.ModuleList()[0]
