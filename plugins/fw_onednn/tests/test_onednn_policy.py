"""Which products are worth oneDNN's call: by default small and matrix-vector products go to
fw_cpu, whose single NumPy call costs less for them, and large ones to oneDNN."""

import numpy as np
import pytest

import fw_core as fw
import fw_onednn
from fw_onednn import kernels
from fw_onednn.cache import PRIMITIVES


@pytest.fixture
def default_policy():
    fw_onednn.set_min_work(kernels.DEFAULT_MIN_WORK)


def _reason(a, b):
    kernels.takes_matmul(a, b)
    return getattr(PRIMITIVES.latest(), "reason", None)


def test_small_products_go_to_fw_cpu(default_policy, rng):
    a, b = rng.standard_normal((32, 32), np.float32), rng.standard_normal((32, 32), np.float32)
    assert not kernels.takes_matmul(a, b)
    assert "32768 multiply-adds, under 1048576" in _reason(a, b)
    np.testing.assert_allclose(fw.matmul(fw.from_numpy(a), fw.from_numpy(b)).numpy(), a @ b,
                               rtol=1e-5, atol=1e-5)


def test_large_products_go_to_onednn_batches_counted(default_policy, rng):
    a, b = rng.standard_normal((128, 128), np.float32), rng.standard_normal((128, 64), np.float32)
    assert kernels.takes_matmul(a, b)  # 2**20 multiply-adds
    assert not kernels.takes_matmul(a[:127], b)
    q = rng.standard_normal((16, 4, 64, 32), np.float32)
    assert kernels.takes_matmul(q, np.swapaxes(q, -1, -2))  # 64 products of 64x32x64


def test_matrix_vector_products_go_to_fw_cpu(default_policy, rng):
    x, w = rng.standard_normal((1, 4096), np.float32), rng.standard_normal((1024, 4096), np.float32)
    assert not kernels.takes_linear(x, w)
    assert not kernels.takes_matmul(w, x[0])
    assert "matrix-vector" in _reason(w, x[0])
    fw_onednn.set_min_work(kernels.DEFAULT_MIN_WORK, matrix_vector=True)
    assert kernels.takes_linear(x, w)


def test_changing_the_policy_forgets_the_old_answers(default_policy, rng):
    a = rng.standard_normal((32, 32), np.float32)
    assert not kernels.takes_matmul(a, a)
    fw_onednn.set_min_work(1000)
    assert fw_onednn.cache_info().size == 0
    assert kernels.takes_matmul(a, a)


@pytest.mark.parametrize("bad", [-1, 1.5, True, None])
def test_min_work_must_be_an_integer_of_at_least_0(bad):
    with pytest.raises(fw.errors.ArgumentError, match="an integer of at least 0"):
        fw_onednn.set_min_work(bad)
