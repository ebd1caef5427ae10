"""Spellings PyTorch accepts besides its own: NumPy's ``axis`` / ``keepdims`` on reductions, and
the legacy ``Tensor.type``; each compared with what torch returns."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import ArgumentError

torch = pytest.importorskip("torch")

REDUCTIONS = ["sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "var", "std",
              "logsumexp", "all", "any"]  # not norm: torch's is Python code without them


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("keepdims", [False, True])
def test_axis_and_keepdims_are_dim_and_keepdim(name, keepdims):
    values = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    if name in ("all", "any"):
        values = values > 0
    ours = getattr(fw.from_numpy(values), name)(axis=1, keepdims=keepdims)
    theirs = getattr(torch.from_numpy(values), name)(axis=1, keepdims=keepdims)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
    function = getattr(fw, name)(fw.from_numpy(values), axis=1, keepdims=keepdims)
    np.testing.assert_allclose(function.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_and_min_with_axis_give_values_and_indices(name):
    values = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    ours = getattr(fw.from_numpy(values), name)(axis=0, keepdims=True)
    theirs = getattr(torch.from_numpy(values), name)(axis=0, keepdims=True)
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())


def test_a_value_under_both_names_is_refused():
    x = fw.ones(2, 3)
    with pytest.raises(ArgumentError, match="dim=0 and its NumPy alias axis=1"):
        x.sum(0, axis=1)
    with pytest.raises(ArgumentError, match="keepdims"):
        x.mean(1, keepdim=True, keepdims=True)


def test_type_names_the_tensor_type_and_casts_to_one():
    x = fw.arange(3)
    assert (x.type(), x.float().type(), (x > 0).type()) == ("fw.LongTensor", "fw.FloatTensor",
                                                            "fw.BoolTensor")
    assert torch.arange(3).type() == "torch.LongTensor"  # the same names under torch's prefix
    assert x.type(fw.float64).dtype is fw.float64
    assert x.type("torch.IntTensor").dtype is fw.int32
    assert x.type("fw.HalfTensor").dtype is fw.float16
    with pytest.raises(fw.errors.DTypeError, match="unknown dtype 'torch.FooTensor'"):
        x.type("torch.FooTensor")


def test_operators_on_integer_tensors_are_bitwise_as_in_torch():
    a, b = np.array([5, -7, 12, 0], np.int32), np.array([3, 2, 10, 31], np.int32)
    shifts = np.array([0, 1, 3, 2], np.int32)
    for op in (lambda x, y: x & y, lambda x, y: x | y, lambda x, y: x ^ y,
               lambda x, y: ~x, lambda x, y: 6 & x, lambda x, y: 5 | x, lambda x, y: 3 ^ x):
        ours, theirs = op(fw.tensor(a), fw.tensor(b)), op(torch.tensor(a), torch.tensor(b))
        assert ours.dtype is fw.int32
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for op in (lambda x, s: x << s, lambda x, s: x >> s):
        np.testing.assert_array_equal(op(fw.tensor(a), fw.tensor(shifts)).numpy(),
                                      op(torch.tensor(a), torch.tensor(shifts)).numpy())
    mask = np.array([True, False, True, False])
    assert (~fw.tensor(mask)).tolist() == [False, True, False, True]


def test_bitwise_ops_refuse_floats_as_torch_does():
    with pytest.raises(RuntimeError):
        torch.ones(2) & torch.ones(2)
    with pytest.raises(fw.errors.DTypeError, match="bitwise_and takes integer or bool"):
        fw.ones(2) & fw.ones(2)
    with pytest.raises(fw.errors.DTypeError, match="bitwise_left_shift takes integer tensors"):
        fw.tensor([True]) << fw.tensor([True])
    assert (fw.tensor([True]) << 1).tolist() == (torch.tensor([True]) << 1).tolist() == [2]
    with pytest.raises(RuntimeError):
        ~fw.ones(2)


@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_div_rounds_as_torch_does(mode):
    ints = [np.array([7, -7, 7, -7, 0, 6]), np.array([2, 2, -2, -2, 3, -3])]
    floats = [np.array([7.5, -7.5, 0.5, -0.25]), np.array([2.0, 2.0, -2.0, 0.5])]
    for a, b in (ints, floats):
        ours = fw.div(fw.tensor(a), fw.tensor(b), rounding_mode=mode)
        theirs = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode=mode)
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert fw.tensor([7.5]).div(2.0, rounding_mode=mode).tolist() == \
        torch.tensor([7.5]).div(2.0, rounding_mode=mode).tolist()
    with pytest.raises(ArgumentError, match="rounding_mode must be None, 'trunc' or 'floor'"):
        fw.div(fw.ones(2), 2, rounding_mode="round")


@pytest.mark.parametrize("kwargs", [{"value": 3.0}, {"value": 2.0, "reduce": "add"},
                                    {"value": 2.0, "reduce": "multiply"}])
def test_scatter_takes_value_and_reduce_as_torch_does(kwargs):
    index = np.array([[0, 1, 2, 0], [0, 0, 0, 0]])
    base = np.random.default_rng(4).standard_normal((3, 4))
    ours = fw.tensor(base, requires_grad=True)
    theirs = torch.tensor(base, requires_grad=True)
    out = ours.scatter(0, fw.tensor(index), **kwargs)
    expected = theirs.scatter(0, torch.tensor(index), **kwargs)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    (grad,) = fw.autograd.grad(out.sum(), [ours])
    if "reduce" not in kwargs:
        (expected_grad,) = torch.autograd.grad(expected.sum(), [theirs])
    else:  # torch has no derivative for a reduced scatter; fw's is that of x + s, x * v**n
        times = np.zeros_like(base)
        np.add.at(times, (index, np.arange(4)[None, :].repeat(2, 0)), 1)
        expected_grad = np.ones_like(base) if kwargs["reduce"] == "add" else \
            kwargs["value"] ** times
        expected_grad = torch.tensor(expected_grad)
    np.testing.assert_allclose(grad.numpy(), expected_grad.numpy(), rtol=1e-12)


def test_scatter_refuses_what_it_cannot_do():
    x, index = fw.zeros(3, 4), fw.tensor([[0, 1, 2, 0]])
    with pytest.raises(ArgumentError, match="give src or value"):
        x.scatter(0, index)
    with pytest.raises(ArgumentError, match="reduce must be 'add' or 'multiply'"):
        x.scatter(0, index, value=1.0, reduce="max")
    with pytest.raises(fw.errors.UnsupportedError, match="a tensor src"):
        x.scatter(0, index, fw.ones(1, 4), reduce="multiply")


def test_softmin_is_softmax_of_the_negated_input():
    values = np.random.default_rng(5).standard_normal((3, 4))
    np.testing.assert_allclose(fw.nn.Softmin(1)(fw.tensor(values)).numpy(),
                               torch.nn.Softmin(1)(torch.tensor(values)).numpy(), rtol=1e-12)
    np.testing.assert_allclose(fw.nn.functional.softmin(fw.tensor(values), 0).numpy(),
                               torch.nn.functional.softmin(torch.tensor(values), 0).numpy(),
                               rtol=1e-12)


def test_where_with_the_condition_alone_gives_its_indices_as_torch():
    values = np.array([[1.0, 0.0, -2.0], [0.0, 3.0, 0.0]])
    ours = fw.where(fw.tensor(values) != 0)
    theirs = torch.where(torch.tensor(values) != 0)
    assert len(ours) == len(theirs) == 2
    for a, b in zip(ours, theirs):
        assert a.tolist() == b.tolist() and a.dtype is fw.int64
    with pytest.raises(TypeError, match="give both a and b"):
        fw.where(fw.tensor(values) > 0, fw.tensor(values))
