"""The promotion table and the dtype rules of tensors and scalars."""

import numpy as np
import pytest
import torch

import fw_core as fw
from fw_core import dtypes


@pytest.mark.parametrize("a", dtypes.ALL, ids=lambda d: d.name)
@pytest.mark.parametrize("b", dtypes.ALL, ids=lambda d: d.name)
def test_promotion_table_matches_torch(a, b):
    expected = torch.promote_types(getattr(torch, a.name), getattr(torch, b.name))
    assert fw.promote_types(a, b).name == str(expected).replace("torch.", "")


@pytest.mark.parametrize("a", dtypes.ALL, ids=lambda d: d.name)
@pytest.mark.parametrize("b", dtypes.ALL, ids=lambda d: d.name)
def test_tensor_add_follows_promotion(a, b):
    x = fw.ones(2, dtype=a)
    y = fw.ones(2, dtype=b)
    assert (x + y).dtype is fw.promote_types(a, b)


@pytest.mark.parametrize("dtype, scalar, expected", [
    (fw.float32, 2.0, fw.float32), (fw.float16, 2.0, fw.float16), (fw.int32, 2, fw.int32),
    (fw.int64, 2.5, fw.float32), (fw.bool_, 1, fw.int64), (fw.uint8, 3, fw.uint8),
    (fw.int32, True, fw.int32),
])
def test_scalars_do_not_widen_tensors(dtype, scalar, expected):
    assert (fw.ones(3, dtype=dtype) * scalar).dtype is expected
    assert (scalar * fw.ones(3, dtype=dtype)).dtype is expected


def test_true_division_of_integers_gives_default_float():
    out = fw.tensor([1, 2]) / fw.tensor([2, 4])
    assert out.dtype is fw.float32
    np.testing.assert_allclose(out.numpy(), [0.5, 0.5])


def test_float_only_ops_promote_integers():
    assert fw.exp(fw.tensor([0, 1])).dtype is fw.float32
    assert fw.sqrt(fw.tensor([4])).item() == 2.0


def test_python_data_defaults():
    assert fw.tensor([1.0, 2.0]).dtype is fw.float32
    assert fw.tensor([1, 2]).dtype is fw.int64
    assert fw.tensor([True]).dtype is fw.bool_
    assert fw.tensor(np.zeros(2)).dtype is fw.float64  # numpy keeps its dtype


def test_unsupported_numpy_dtype_names_the_supported_ones():
    with pytest.raises(fw.errors.DTypeError, match="float32"):
        fw.from_numpy(np.zeros(2, dtype=np.complex64))


def test_dtype_names_and_aliases():
    assert dtypes.as_dtype("double") is fw.float64
    assert dtypes.as_dtype(float) is fw.float32
    assert repr(fw.int64) == "fw.int64"
    with pytest.raises(fw.errors.DTypeError, match="unknown dtype"):
        dtypes.as_dtype("float8")


def test_small_integer_dtypes_have_torchs_names_and_methods():
    assert fw.short is fw.int16 and dtypes.as_dtype("short") is fw.int16
    assert fw.tensor([1.7, -2.2]).short().dtype is fw.int16
    assert fw.tensor([1.7, -2.2]).char().tolist() == torch.tensor([1.7, -2.2]).char().tolist()
    assert fw.ones(2, dtype=fw.int8).type() == "fw.CharTensor"


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8"])
def test_an_int_scalar_out_of_range_wraps_as_in_torch(dtype):
    values = [3, -100, 100] if dtype != "uint8" else [3, 100, 200]
    ours, theirs = fw.tensor(values, dtype=dtype), torch.tensor(values, dtype=getattr(torch,
                                                                                      dtype))
    # (comparisons are left out: NumPy compares with the exact value, PyTorch the wrapped one)
    for call in (lambda a: a * 1000, lambda a: a + 70000, lambda a: 1000 - a,
                 lambda a: a // 1000):
        out, expected = call(ours), call(theirs)
        assert out.tolist() == expected.tolist()
        assert out.dtype.name == str(expected.dtype).replace("torch.", "")


def test_small_integers_cast_and_overflow_like_torch():
    x = np.array([-129.7, 127.2, 300.0, 40000.0])
    for name in ("int8", "int16"):
        ours = fw.tensor(x).to(getattr(fw, name))
        assert ours.dtype.name == name
        assert (ours + ours).tolist() == (torch.tensor(ours.numpy()) * 2).tolist()
    assert fw.arange(-128, 128, dtype=fw.int8).tolist() == list(range(-128, 128))
