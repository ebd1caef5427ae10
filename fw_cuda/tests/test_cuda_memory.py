"""CuPy's memory pool under fw's pool: the release arithmetic (over a stand-in with CuPy's
read-out methods), the device record's delegation to the seam, and on a real GPU (skipped
without one) the tags and the DataLoader's staged copies."""

import numpy as np
import pytest
from cuda_seams import HAS_GPU, TwoDevices

import fw_core as fw
from fw_cuda import device
from fw_cuda.memory import POLICIES, release_cached


class PoolNumbers:
    """CuPy MemoryPool's read-out and release methods over fixed numbers."""

    def __init__(self, used, total):
        self.used, self.total = used, total

    def used_bytes(self):
        return self.used

    def total_bytes(self):
        return self.total

    def free_bytes(self):
        return self.total - self.used

    def free_all_blocks(self):
        self.total = self.used


def test_release_cached_returns_freed_bytes():
    pool = PoolNumbers(1024, 4096)
    assert release_cached(pool) == 3072 and pool.total_bytes() == 1024


def test_policy_releases_debug_captures_first():
    (policy,) = POLICIES
    assert policy.device == "cuda" and policy.release_order == ("debug", "cache", "temporary")


def test_device_reports_the_pool_through_the_seam(monkeypatch):
    seam = TwoDevices()
    seam.pool_usage = lambda index: (100 * index, 300)
    seam.release_cached = lambda index: 7
    spec = device.cuda_spec()
    monkeypatch.setattr(device, "runtime", seam)
    assert spec.allocator_usage(1) == (100, 300) and spec.release_cached(0) == 7


@pytest.mark.skipif(not HAS_GPU, reason="needs a GPU")
def test_kernel_results_count_as_temporary_on_the_gpu():
    weight = fw.memory.track(fw.randn(256, 256).to("cuda"), "parameter")
    product = weight @ weight  # a kernel result fw does not track
    stats = fw.memory.summary("cuda")["cuda:0"]
    assert stats["parameter"]["live_bytes"] >= 256 * 256 * 4
    assert stats["temporary"]["live_bytes"] >= product.numel() * 4
    assert stats["pool"]["device_used_bytes"] >= 2 * 256 * 256 * 4


@pytest.mark.skipif(not HAS_GPU, reason="needs a GPU")
def test_loader_stages_batches_onto_the_gpu_through_pinned_buffers():
    x = np.arange(2 * 1000, dtype=np.float32).reshape(1000, 2)
    loader = fw.data.DataLoader(fw.data.TensorDataset(fw.tensor(x)), batch_size=64,
                                shuffle=False, device="cuda")
    batches = [b for (b,) in loader]
    assert all(b.device == "cuda" for b in batches)
    np.testing.assert_array_equal(np.concatenate([b.numpy() for b in batches]), x)
