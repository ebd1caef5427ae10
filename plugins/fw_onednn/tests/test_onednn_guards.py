"""What the guards refuse goes to fw_cpu, decided before either kernel runs: other dtypes,
mixed dtypes, layouts oneDNN has only reference loops for."""

import numpy as np
import pytest

import fw_core as fw
import fw_onednn
from fw_onednn import kernels


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int64, np.int32])
def test_other_dtypes_go_to_fw_cpu(rng, dtype):
    a = (rng.standard_normal((3, 4)) * 4).astype(dtype)
    b = (rng.standard_normal((4, 2)) * 4).astype(dtype)
    w = (rng.standard_normal((2, 4)) * 4).astype(dtype)
    assert not kernels.takes_matmul(a, b)
    assert not kernels.takes_bmm(a[None], b[None])
    assert not kernels.takes_linear(a, w)
    assert not kernels.takes_linear(a, w, np.zeros(2, dtype))
    got = fw.matmul(fw.from_numpy(a), fw.from_numpy(b)).numpy()
    assert got.dtype == dtype
    np.testing.assert_allclose(got.astype(np.float64), a.astype(np.float64) @ b,
                               rtol=1e-2 if dtype == np.float16 else 1e-12)
    assert fw_onednn.cache_info().misses == 0  # refused before oneDNN was asked


def test_a_float64_bias_is_refused(rng):
    x, w = rng.standard_normal((3, 4), np.float32), rng.standard_normal((2, 4), np.float32)
    assert not kernels.takes_linear(x, w, np.zeros(2))


def test_mixed_dtypes_are_refused_and_fw_says_why(rng):
    a, b = rng.standard_normal((3, 4), np.float32), rng.standard_normal((4, 2))
    assert not kernels.takes_matmul(a, b)
    with pytest.raises(fw.errors.DTypeError, match="different dtypes"):
        fw.matmul(fw.from_numpy(a), fw.from_numpy(b))


def test_a_doubly_strided_operand_is_refused_with_onednns_answer(rng):
    a = rng.standard_normal((6, 8), np.float32)[::2, ::2]
    b = rng.standard_normal((4, 5), np.float32)
    assert not kernels.takes_matmul(a, b)
    (refusal,) = fw_onednn.cache.PRIMITIVES._entries.values()
    assert "reference code (ref:any)" in refusal.reason
    np.testing.assert_allclose(fw.matmul(fw.from_numpy(a), fw.from_numpy(b)).numpy(), a @ b,
                               rtol=1e-5, atol=1e-6)


def test_a_stride_that_is_no_whole_element_is_refused_an_unaligned_start_is_not(rng):
    raw = rng.integers(0, 60, 4 * 16 + 1).astype(np.uint8)  # bytes of small positive floats
    unaligned = np.ndarray((3, 4), np.float32, raw.data, offset=1, strides=(16, 4))
    odd = np.ndarray((3, 4), np.float32, raw.data, offset=0, strides=(13, 4))
    b = rng.standard_normal((4, 2), np.float32)
    assert kernels.takes_matmul(unaligned, b)
    assert not kernels.takes_matmul(odd, b)
    for a in (unaligned, odd):
        np.testing.assert_allclose(fw.matmul(fw.from_numpy(a), fw.from_numpy(b)).numpy(), a @ b,
                                   rtol=1e-5)


def test_the_dispatch_table_names_fw_onednn_and_what_its_guard_takes():
    rows = {r["op"]: r for r in fw.plugins.dispatch_table() if r["device"] == "cpu"}
    for op, _, _, takes in kernels.KERNELS:
        assert rows[op]["plugin"] == "fw_onednn"
        assert f"fw_onednn when it takes the call ({takes}), " in rows[op]["why"]
        assert ", else fw_cpu" in rows[op]["why"]
    assert rows["outer"]["plugin"] == "fw_cpu"
