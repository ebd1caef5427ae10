"""CuPy's memory pool read in fw's lifecycle tags (the pool is a stand-in with CuPy's
read-out methods: only the accounting arithmetic is under test), and the DataLoader's staged
copies onto a real GPU (skipped without one)."""

import numpy as np
import pytest
from cuda_seams import HAS_GPU

import fw_core as fw
from fw_cuda.memory import POLICIES, release_cached, tag_usage


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


def fw_stats(**live):
    return {tag: {"live_bytes": live.get(tag, 0), "peak_bytes": 0, "count": 0}
            for tag in fw.memory.TAGS}


def test_untracked_pool_bytes_count_as_temporary():
    stats = fw_stats(parameter=1000, gradient=1000, temporary=24)
    usage = tag_usage(stats, PoolNumbers(5024, 8192))
    assert usage["tags"]["parameter"] == 1000 and usage["tags"]["gradient"] == 1000
    assert usage["tags"]["temporary"] == 24 + 3000
    assert usage["used_bytes"] == 5024 and usage["reserved_bytes"] == 8192
    assert usage["cached_free_bytes"] == 3168


def test_tracked_bytes_above_pool_usage_add_nothing():
    usage = tag_usage(fw_stats(parameter=4096), PoolNumbers(1024, 1024))
    assert usage["tags"]["temporary"] == 0


def test_release_cached_returns_freed_bytes():
    pool = PoolNumbers(1024, 4096)
    assert release_cached(pool) == 3072 and pool.total_bytes() == 1024


def test_policy_releases_debug_captures_first():
    (policy,) = POLICIES
    assert policy.device == "cuda" and policy.release_order == ("debug", "cache", "temporary")


@pytest.mark.skipif(not HAS_GPU, reason="needs a GPU")
def test_loader_stages_batches_onto_the_gpu_through_pinned_buffers():
    x = np.arange(2 * 1000, dtype=np.float32).reshape(1000, 2)
    loader = fw.data.DataLoader(fw.data.TensorDataset(fw.tensor(x)), batch_size=64,
                                shuffle=False, device="cuda")
    batches = [b for (b,) in loader]
    assert all(b.device == "cuda" for b in batches)
    np.testing.assert_array_equal(np.concatenate([b.numpy() for b in batches]), x)
