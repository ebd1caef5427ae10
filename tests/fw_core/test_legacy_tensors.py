"""fw.FloatTensor and its kin construct and check types as PyTorch's legacy tensor types do."""

import numpy as np
import pytest
import torch

import fw_core as fw
from fw_core.errors import ArgumentTypeError, DeviceError, DTypeError

NAMES = ("FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor", "ByteTensor")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("data", [[1, 0, 2], [[1.5, 2.0], [0.0, 3.7]], np.array([3, 1]), []])
def test_from_data_matches_torch(name, data):
    ours, theirs = getattr(fw, name)(data), getattr(torch, name)(data)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("sizes", [(), (3,), (2, 3), (0, 4)])
def test_from_sizes_matches_torch(name, sizes):
    ours, theirs = getattr(fw, name)(*sizes), getattr(torch, name)(*sizes)
    assert ours.shape == tuple(theirs.shape) and ours.device == "cpu"
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")


def test_isinstance_checks_dtype_and_device_as_torch():
    x = fw.zeros(2)
    assert isinstance(x, fw.FloatTensor) and not isinstance(x, fw.DoubleTensor)
    assert isinstance(x.to(fw.float64), fw.DoubleTensor)
    assert isinstance(fw.tensor([1, 2]), fw.LongTensor)
    assert isinstance(fw.tensor([True]), fw.BoolTensor)
    assert not isinstance([1.0], fw.FloatTensor)
    assert fw.FloatTensor.dtype is fw.float32 and fw.ByteTensor.dtype is fw.uint8
    assert repr(fw.LongTensor) == "<class 'fw.LongTensor'>"


def test_from_a_tensor_of_its_dtype_is_a_view_that_keeps_the_graph():
    x = fw.zeros(2, requires_grad=True)
    y = fw.FloatTensor(x)
    assert y is not x and y.requires_grad  # as torch: an alias with a grad_fn
    (y * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    with pytest.raises(DTypeError, match="expected a float32 tensor, got int64"):
        fw.FloatTensor(fw.arange(3))
    with pytest.raises(TypeError):
        torch.FloatTensor(torch.arange(3))


@pytest.mark.parametrize("args", [(2.5,), ("a",), ([1, 2], 3), (True,)])
def test_what_torch_refuses_is_a_type_error(args):
    with pytest.raises(ArgumentTypeError):
        fw.FloatTensor(*args)
    with pytest.raises(TypeError):
        torch.FloatTensor(*args)


def test_a_negative_size_and_another_device_are_refused():
    with pytest.raises(RuntimeError):
        fw.FloatTensor(-1)
    with pytest.raises(RuntimeError):
        torch.FloatTensor(-1)
    assert fw.FloatTensor([1.0], device="cpu").tolist() == [1.0]
    with pytest.raises(DeviceError, match="expects device type: cpu but device type: cuda"):
        fw.FloatTensor([1.0], device="cuda:0")  # refused whether or not a GPU works
