"""The primitive cache: one entry per op, layout and attributes; hits, misses and evictions
counted; bounded; refusals cached; native objects released when an entry goes."""

import gc
import weakref

import numpy as np
import pytest

import fw_core as fw
import fw_onednn
from fw_onednn.cache import PRIMITIVES


def _matmul(a, b):
    return fw.matmul(fw.from_numpy(a), fw.from_numpy(b))


def test_a_layout_is_built_once_then_hit(rng):
    a, b = rng.standard_normal((3, 4), np.float32), rng.standard_normal((4, 5), np.float32)
    for _ in range(3):
        _matmul(a, b)
    info = fw_onednn.cache_info()
    assert (info.hits, info.misses, info.evictions, info.size) == (2, 1, 0, 1)
    assert info.by_kind == {"matmul:f32": 1} and info.refusals == 0


def test_the_key_holds_op_shapes_strides_and_bias(rng):
    a, b = rng.standard_normal((3, 4), np.float32), rng.standard_normal((4, 5), np.float32)
    _matmul(a, b)
    _matmul(a, np.asfortranarray(b))  # same shapes, other strides
    _matmul(a[:2], b)  # other shape
    bt = fw.from_numpy(b.T.copy())
    fw.linear(fw.from_numpy(a), bt)
    fw.linear(fw.from_numpy(a), bt, fw.zeros(5))
    info = fw_onednn.cache_info()
    assert info.misses == 5 and info.hits == 0
    assert info.by_kind == {"matmul:f32": 3, "linear:f32": 1, "linear+bias:f32": 1}


def test_bmm_shares_matmuls_primitives(rng):
    a, b = rng.standard_normal((2, 3, 4), np.float32), rng.standard_normal((2, 4, 5), np.float32)
    _matmul(a, b)
    fw.bmm(fw.from_numpy(a), fw.from_numpy(b))
    assert (fw_onednn.cache_info().misses, fw_onednn.cache_info().hits) == (1, 1)


def test_refusals_are_cached_and_counted(rng):
    a = rng.standard_normal((6, 8), np.float32)[::2, ::2]
    b = rng.standard_normal((4, 5), np.float32)
    _matmul(a, b)
    _matmul(a, b)
    info = fw_onednn.cache_info()
    assert (info.misses, info.hits, info.refusals, info.size) == (1, 1, 1, 1)


def test_past_capacity_the_least_recently_used_goes(rng):
    fw_onednn.set_cache_capacity(2)
    try:
        a = rng.standard_normal((4, 4), np.float32)
        first, second, third = (rng.standard_normal((4, n), np.float32) for n in (1, 2, 3))
        _matmul(a, first)
        _matmul(a, second)
        _matmul(a, first)  # first is now the most recently used
        _matmul(a, third)  # evicts second
        info = fw_onednn.cache_info()
        assert (info.size, info.evictions, info.capacity) == (2, 1, 2)
        _matmul(a, first)
        assert fw_onednn.cache_info().hits == 2
        _matmul(a, second)
        assert fw_onednn.cache_info().misses == 4
    finally:
        fw_onednn.set_cache_capacity(1024)


def test_an_evicted_primitive_lives_while_a_call_of_it_is_held(rng):
    a, b = rng.standard_normal((3, 4), np.float32), rng.standard_normal((4, 5), np.float32)
    _matmul(a, b)
    (entry,) = PRIMITIVES._entries.values()
    call, handles = entry.call, weakref.ref(entry.handles)
    del entry
    fw_onednn.cache_clear()
    assert fw_onednn.cache_info() == fw_onednn.CacheInfo(0, 0, 0, 0, 1024, 0, {})
    assert handles() is not None  # what a guard handed out before the eviction still runs
    np.testing.assert_allclose(call(a, b), a @ b, rtol=1e-6, atol=1e-6)
    del call
    gc.collect()
    assert handles() is None


@pytest.mark.parametrize("bad", [0, -3, 2.0, True, "8"])
def test_the_capacity_must_be_a_positive_integer(bad):
    with pytest.raises(fw.errors.ArgumentError, match="positive integer"):
        fw_onednn.set_cache_capacity(bad)
