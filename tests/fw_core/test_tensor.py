"""The Tensor API users expect from PyTorch: construction, conversion, Python protocols."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import DeviceError, FwError, ShapeError


def test_construction_and_basic_properties():
    t = fw.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.shape == (2, 3) and t.ndim == 2 and t.dim() == 2 and t.numel() == 6
    assert t.size() == (2, 3) and t.size(1) == 3 and len(t) == 2
    assert t.dtype is fw.float32 and t.device == "cpu" and str(t.device) == "cpu"
    assert t.is_leaf and not t.requires_grad and t.grad is None
    assert t.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def test_tensor_copies_but_from_numpy_shares():
    a = np.arange(3.0)
    copied, shared = fw.tensor(a), fw.from_numpy(a)
    a[0] = 10.0
    assert copied.tolist()[0] == 0.0 and shared.tolist()[0] == 10.0
    assert np.shares_memory(shared.numpy(), a)


def test_item_and_python_conversions():
    t = fw.tensor([2.5])
    assert t.item() == 2.5 and float(t) == 2.5 and int(fw.tensor(3)) == 3
    assert bool(fw.tensor([1.0])) is True
    with pytest.raises(FwError, match="ambiguous"):
        bool(fw.tensor([1.0, 2.0]))
    with pytest.raises(FwError, match="one element"):
        fw.tensor([1.0, 2.0]).item()


def test_numpy_of_tensor_requiring_grad_says_detach():
    t = fw.tensor([1.0], requires_grad=True)
    with pytest.raises(FwError, match="detach"):
        t.numpy()
    assert t.detach().numpy().tolist() == [1.0]


def test_only_float_tensors_can_require_grad():
    with pytest.raises(FwError, match="floating-point"):
        fw.tensor([1, 2], requires_grad=True)


def test_to_dtype_and_device_and_methods():
    t = fw.tensor([1.7, -2.2])
    assert t.to(fw.float64).dtype is fw.float64
    assert t.double().dtype is fw.float64 and t.long().tolist() == [1, -2]
    assert t.to("cpu") is t and t.to(fw.float32) is t
    assert t.to(device="cpu", dtype="float16").dtype is fw.float16
    assert t.to(fw.zeros(1, dtype=fw.int32)).dtype is fw.int32
    with pytest.raises(DeviceError, match="no device type 'tpu'"):
        t.to("tpu")


def test_cast_is_differentiable_back_to_the_source_dtype():
    x = fw.tensor([1.0, 2.0], requires_grad=True)
    (x.double() * 3.0).sum().backward()
    assert x.grad.dtype is fw.float32
    assert x.grad.tolist() == [3.0, 3.0]


def test_operators_and_reflected_operators():
    t = fw.tensor([1.0, 2.0])
    assert (2.0 - t).tolist() == [1.0, 0.0]
    assert (1.0 / t).tolist() == [1.0, 0.5]
    assert (2.0 ** t).tolist() == [2.0, 4.0]
    assert (-t).tolist() == [-1.0, -2.0]
    assert (t == 1.0).tolist() == [True, False]
    assert ((t > 1.0) | (t < 1.5)).tolist() == [True, True]
    assert (~(t > 1.0)).tolist() == [True, False]
    assert (np.array([1.0, 1.0], dtype=np.float32) + t).tolist() == [2.0, 3.0]


def test_in_place_operators_write_storage_and_bump_version():
    t = fw.tensor([1.0, 2.0])
    storage = t._data
    t += 1.0
    t *= 2.0
    assert t._data is storage and t.tolist() == [4.0, 6.0] and t._version == 2
    t.zero_()
    assert t.tolist() == [0.0, 0.0]
    t.fill_(3.0)
    t.copy_(fw.tensor([5.0, 6.0]))
    assert t.tolist() == [5.0, 6.0]


def test_in_place_shape_mismatch_is_a_shape_error():
    with pytest.raises(ShapeError, match="in place"):
        fw.zeros(2).copy_(fw.zeros(3))


def test_repr_shows_grad_fn_and_dtype():
    x = fw.tensor([1.0], requires_grad=True)
    assert "requires_grad=True" in repr(x)
    assert "grad_fn=<expBackward>" in repr(fw.exp(x))
    assert "dtype=fw.float64" in repr(fw.zeros(1, dtype=fw.float64))


def test_creation_functions():
    assert fw.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert fw.ones((2,), dtype=fw.int32).dtype is fw.int32
    assert fw.full((2,), 7).dtype is fw.int64 and fw.full((2,), 7.0).dtype is fw.float32
    assert fw.arange(5).tolist() == [0, 1, 2, 3, 4] and fw.arange(5).dtype is fw.int64
    assert fw.arange(0.0, 1.0, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert fw.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert fw.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert fw.eye(2, 3).shape == (2, 3)
    assert fw.empty(3).shape == (3,)
    like = fw.zeros_like(fw.ones(2, dtype=fw.float64))
    assert like.dtype is fw.float64 and like.tolist() == [0.0, 0.0]
    assert fw.full_like(fw.ones(2), 4.0).tolist() == [4.0, 4.0]
    assert fw.ones(2, requires_grad=True).requires_grad
    with pytest.raises(ShapeError, match="negative"):
        fw.zeros(-1)


def test_random_functions_follow_the_seed():
    fw.manual_seed(3)
    a = fw.randn(4)
    fw.manual_seed(3)
    b = fw.randn(4)
    assert a.tolist() == b.tolist()
    g = fw.Generator().manual_seed(3)
    assert fw.rand(3, generator=g).shape == (3,)
    r = fw.randint(0, 5, (100,))
    assert r.dtype is fw.int64 and 0 <= min(r.tolist()) and max(r.tolist()) < 5
    assert sorted(fw.randperm(6).tolist()) == list(range(6))
    assert fw.rand_like(fw.zeros(2, 2)).shape == (2, 2)
    assert fw.randn_like(fw.zeros(2, dtype=fw.float64)).dtype is fw.float64


def test_generator_state_round_trip():
    g = fw.Generator(7)
    state = g.get_state()
    first = fw.rand(3, generator=g).tolist()
    g.set_state(state)
    assert fw.rand(3, generator=g).tolist() == first


def test_iteration_yields_rows():
    t = fw.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert [row.tolist() for row in t] == [[1.0, 2.0], [3.0, 4.0]]
