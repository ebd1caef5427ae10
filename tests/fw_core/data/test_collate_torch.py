"""default_collate and default_convert against torch.utils.data's: the same structure (mapping
types, named tuples, tuples becoming lists), the same dtypes and values, for nested samples."""

import collections

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import fw_core as fw
from fw_core.data import DataError, default_collate, default_convert

Pair = collections.namedtuple("Pair", "image label")


def same(ours, theirs) -> None:
    """Assert ``ours`` (fw) mirrors ``theirs`` (torch): container types, keys, tensor dtypes
    and values, and plain leaves equal."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, fw.Tensor), type(ours)
        assert str(ours.dtype).removeprefix("fw.") == str(theirs.dtype).removeprefix("torch.")
        assert ours.shape == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and list(ours) == list(theirs)
        for key in theirs:
            same(ours[key], theirs[key])
    elif isinstance(theirs, (list, tuple)):
        if isinstance(theirs, tuple) and all(isinstance(v, (str, bytes)) for v in theirs):
            theirs = list(theirs)  # torch hands a column of strings back as zip made it
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            same(a, b)
    elif isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray)
        np.testing.assert_array_equal(ours, theirs)
    else:
        assert type(ours) is type(theirs) and ours == theirs


def nested(i: int):
    return {"image": np.full((2, 3), i, np.uint8),
            "meta": (np.int32(i), f"name{i}", [np.float32(i / 2), b"raw"]),
            "pair": Pair(np.arange(3, dtype=np.float64) + i, i),
            "ordered": collections.OrderedDict(b=np.bool_(i % 2), a=i)}


def test_default_collate_matches_torch_on_nested_samples():
    batch = [nested(i) for i in range(3)]
    same(default_collate(batch), tud.default_collate(batch))


def test_default_collate_turns_tuples_into_lists_and_keeps_list_types_as_torch():
    samples = [(np.zeros(2), 1), (np.ones(2), 2)]
    ours = default_collate(samples)
    assert isinstance(ours, list)
    same(ours, tud.default_collate(samples))
    same(default_collate([[1, "a"], [2, "b"]]), tud.default_collate([[1, "a"], [2, "b"]]))


def test_default_collate_keeps_a_defaultdict_and_its_factory():
    samples = [collections.defaultdict(list, x=np.array([i])) for i in range(2)]
    ours, theirs = default_collate(samples), tud.default_collate(samples)
    same(ours, theirs)
    assert ours.default_factory is list is theirs.default_factory


@pytest.mark.parametrize("samples", [
    [1, 2, 3],
    [True, False],
    [np.float32(1.5), np.float32(2)],
    [np.int16(3), np.int16(-4)],
    [np.array(3), np.array(4)],
    [np.zeros((2, 2), np.int8), np.ones((2, 2), np.int8)],
    ["a", "b"],
    [b"x", b"y"],
    [fw.ones(2), fw.zeros(2)],
], ids=lambda s: type(s[0]).__name__)
def test_default_collate_leaves_match_torch(samples):
    theirs = [torch.from_numpy(s.numpy()) if isinstance(s, fw.Tensor) else s for s in samples]
    same(default_collate(samples), tud.default_collate(theirs))


def test_python_floats_collate_to_fws_default_float_where_torch_gives_float64():
    assert tud.default_collate([1.5, 2.0]).dtype == torch.float64
    assert default_collate([1.5, 2.0]).dtype == fw.float32


def test_default_collate_refuses_string_arrays_as_torch():
    samples = [np.array(["a"]), np.array(["b"])]
    with pytest.raises(TypeError):
        tud.default_collate(samples)
    with pytest.raises(DataError, match="cannot batch samples of type ndarray of dtype <U1"):
        default_collate(samples)


@pytest.mark.parametrize("sample", [
    nested(3),
    (1, np.array([1, 2]), np.float32(3), "s", {"a": (1, 2)}),
    Pair(np.zeros(2), 1),
    [np.int64(5), 2.5, None],
    np.array(["text"]),
    np.array([1.0, 2.0], np.float16),
    np.float64(7.0),
    7,
    "plain",
], ids=lambda s: type(s).__name__)
def test_default_convert_matches_torch(sample):
    same(default_convert(sample), tud.default_convert(sample))


def test_default_convert_leaves_tensors_alone():
    t = fw.arange(3)
    assert default_convert(t) is t
    assert default_convert([t])[0] is t


def test_fw_utils_data_exports_both_functions():
    assert fw.utils.data.default_convert is default_convert
    assert fw.utils.data.dataloader.default_convert is default_convert
    assert fw.utils.data.default_collate is default_collate
