"""fmod, copysign, hypot and nan_to_num where PyTorch's behaviour is more than values: the sign
bit of zeros, dtypes, and the errors torch raises (clamp without bounds and an unknown
rounding_mode are RuntimeErrors there, and fw's are too)."""

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import DTypeError, FwError

torch = pytest.importorskip("torch")

SPECIALS = [-1.0, -0.0, 0.0, 1.0, np.inf, -np.inf, np.nan]


def test_copysign_takes_the_sign_bit_of_zeros_and_nan_as_torch():
    a = np.repeat(SPECIALS, len(SPECIALS))
    b = np.tile(SPECIALS, len(SPECIALS))
    got = fw.copysign(fw.tensor(a), fw.tensor(b)).numpy()
    expected = torch.copysign(torch.tensor(a), torch.tensor(b)).numpy()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))
    np.testing.assert_array_equal(got, expected)
    ints = fw.copysign(fw.tensor([1, 2]), -0.0)
    assert ints.dtype is fw.float32 and ints.tolist() == [-1.0, -2.0]


def test_copysign_gradient_is_zero_at_zero_and_none_reaches_the_sign():
    a = fw.tensor([-4.0, 7.0, 0.0, -0.0, 3.0], requires_grad=True)
    b = fw.tensor([2.0, -3.0, 1.0, 1.0, -0.0], requires_grad=True)
    fw.copysign(a, b).sum().backward()
    assert a.grad.tolist() == [-1.0, -1.0, 0.0, 0.0, -1.0]
    assert b.grad.tolist() == [0.0] * 5


def test_fmod_keeps_the_dividends_sign_and_integer_zero_divisors_raise():
    a, b = [-4, 7, 5, 4, -7, 8, -9], [2, -3, 8, -2, 3, 5, -5]
    got = fw.tensor(a).fmod(fw.tensor(b))
    assert got.dtype is fw.int64
    assert got.tolist() == torch.tensor(a).fmod(torch.tensor(b)).tolist()
    with pytest.raises(RuntimeError):
        fw.fmod(fw.tensor([1, 2]), 0)
    assert np.isnan(fw.fmod(fw.tensor([1.0]), 0).numpy()).all()


def test_hypot_refuses_integers_as_torch():
    with pytest.raises(DTypeError, match="hypot"):
        fw.hypot(fw.tensor([3]), fw.tensor([4]))
    assert fw.tensor([3.0]).hypot(fw.tensor([4.0])).tolist() == [5.0]


def test_nan_to_num_defaults_are_the_dtypes_finite_limits():
    x = np.array([np.nan, np.inf, -np.inf, 1.0], np.float16)
    np.testing.assert_array_equal(fw.nan_to_num(fw.tensor(x)).numpy(),
                                  torch.nan_to_num(torch.tensor(x)).numpy())
    ints = fw.nan_to_num(fw.tensor([1, 2]), nan=5.0)
    assert ints.dtype is fw.int64 and ints.tolist() == [1, 2]
    grad_input = fw.tensor([np.nan, np.inf, 2.0], requires_grad=True)
    grad_input.nan_to_num(posinf=1.0).sum().backward()
    assert grad_input.grad.tolist() == [0.0, 0.0, 1.0]


@pytest.mark.parametrize("call", [
    lambda lib: lib.clamp(lib.ones(2)),
    lambda lib: lib.ones(2).clip(),
    lambda lib: lib.ones(2).div(lib.ones(2), rounding_mode="typo"),
], ids=["clamp", "clip", "div"])
def test_refused_arguments_are_runtime_errors_as_in_torch(call):
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(RuntimeError) as info:
        call(fw)
    assert isinstance(info.value, FwError) and info.value.hint
