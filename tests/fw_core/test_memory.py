"""fw.memory: tags, tracking without per-op cost, the recycling pool, pressure response, reports."""

import numpy as np
import pytest

import fw_core as fw
from fw_core import memory
from fw_core.errors import ArgumentError
from fw_core.records import MemoryPolicy


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    """Each test sees empty pools, callbacks and limits; the process-wide ones come back after."""
    for name, value in (("_pools", {}), ("_tracked", {}), ("_callbacks", {}), ("_limits", {}),
                        ("_selected", "default")):
        monkeypatch.setattr(memory, name, value)


def live(tag, device="cpu"):
    return memory.summary(device)[device][tag]


def test_track_counts_bytes_until_the_tensor_dies():
    t = fw.zeros(10, 10)  # float32: 400 bytes
    assert memory.track(t, "gradient") is t
    assert live("gradient") == {"live_bytes": 400, "peak_bytes": 400, "count": 1}
    memory.track(t, "gradient")  # idempotent
    assert live("gradient")["count"] == 1
    del t
    assert live("gradient") == {"live_bytes": 0, "peak_bytes": 400, "count": 0}


def test_tracking_under_another_tag_moves_the_bytes():
    t = memory.track(fw.zeros(25), "temporary")
    memory.track(t, "optimizer_state")
    assert memory.tag_of(t) == "optimizer_state"
    assert live("temporary")["live_bytes"] == 0
    assert live("optimizer_state") == {"live_bytes": 100, "peak_bytes": 100, "count": 1}


def test_parameters_are_tagged_when_created():
    layer = fw.nn.Linear(4, 3)  # 12 + 3 float32 values
    assert memory.tag_of(layer.weight) == "parameter"
    assert live("parameter") == {"live_bytes": 60, "peak_bytes": 60, "count": 2}
    del layer
    assert live("parameter")["live_bytes"] == 0


def test_unknown_tag_is_refused_with_the_valid_ones():
    with pytest.raises(ArgumentError, match="unknown memory tag 'weights'") as info:
        memory.track(fw.zeros(2), "weights")
    assert "optimizer_state" in info.value.hint


def test_pool_recycles_a_released_block_of_the_same_size_class():
    a = memory.allocate((3, 5), fw.float32, "cache")
    assert a.shape == (3, 5) and a.dtype == np.float32
    memory.release(a)
    b = memory.allocate((60,), np.uint8, "temporary")  # 60 bytes: the same 512-byte class
    assert np.shares_memory(a, b)
    stats = memory.summary("cpu")["cpu"]
    assert stats["pool"]["hits"] == 1 and stats["pool"]["misses"] == 1
    assert stats["pool"]["reserved_bytes"] == 512 and stats["pool"]["free_bytes"] == 0
    assert stats["temporary"]["live_bytes"] == 60 and stats["cache"]["live_bytes"] == 0
    assert stats["cache"]["peak_bytes"] == 60


def test_size_classes_come_from_the_policy_else_powers_of_two():
    cpu = fw.device("cpu")
    default = memory.Pool(cpu, MemoryPolicy("default", "cpu"))
    assert [default.size_class(n) for n in (1, 512, 513, 5000)] == [512, 512, 1024, 8192]
    custom = memory.Pool(cpu, MemoryPolicy("small", "cpu", size_classes=(256, 4096)))
    assert [custom.size_class(n) for n in (10, 300, 4096, 5000)] == [256, 4096, 4096, 8192]
    fine = memory.Pool(cpu, memory.BUILTIN_POLICIES["low_memory"])
    assert [fine.size_class(n) for n in (513, 700, 1000)] == [640, 768, 1024]


def test_release_of_a_foreign_array_is_an_error():
    with pytest.raises(ArgumentError, match="not allocated by fw.memory.allocate, or was released"):
        memory.release(np.zeros(3))


def test_pressure_drops_free_blocks_then_calls_callbacks_in_release_order():
    called = []
    blocks = [memory.allocate((128,), np.float32, "cache") for _ in range(2)]  # 2 x 512 bytes
    for b in blocks:
        memory.release(b)
    held = memory.track(fw.zeros(256), "debug")  # 1024 bytes
    memory.on_pressure("cache", lambda: called.append("cache"))

    def drop_capture():
        nonlocal held
        called.append("debug")
        held = None

    memory.on_pressure("debug", drop_capture)
    memory.set_limit(1500)  # 1024 live + 1024 free > 1500: dropping the free blocks suffices
    assert called == [] and memory.summary("cpu")["cpu"]["pool"]["free_bytes"] == 0
    memory.set_limit(1000)  # 1024 live > 1000: the debug capture goes first, then we are under
    assert called == ["debug"] and held is None
    stats = memory.summary("cpu")["cpu"]
    assert stats["debug"]["live_bytes"] == 0 and stats["pool"]["pressure_events"] == 2


def test_pressure_callbacks_run_once_and_can_be_cancelled():
    called = []
    memory.on_pressure("debug", lambda: called.append("once"))
    cancel = memory.on_pressure("debug", lambda: called.append("cancelled"))
    cancel()
    memory.set_limit(100)
    keep = memory.track(fw.zeros(100), "parameter")  # parameters are never released
    memory.track(fw.zeros(1), "temporary")
    assert called == ["once"] and keep is not None


def test_set_limit_none_goes_back_to_the_policy_limit():
    memory.set_limit(10)
    assert memory.summary("cpu")["cpu"]["pool"]["limit_bytes"] == 10
    memory.set_limit(None)
    assert memory.summary("cpu")["cpu"]["pool"]["limit_bytes"] is None


def test_policies_registered_or_built_in_and_unknown_names_listed():
    assert memory.pool("cpu").policy.name == "default"
    assert memory.set_policy("cpu", "low_memory").size_classes[:2] == (512, 640)
    with pytest.raises(ArgumentError, match="no memory policy 'huge'") as info:
        memory.set_policy("cpu", "huge")
    assert "low_memory" in info.value.hint
    memory.use_policy("default")
    assert memory.pool("cpu").policy.name == "default"
    with pytest.raises(ArgumentError, match="no memory policy named 'huge'"):
        memory.use_policy("huge")


def test_reset_peak_and_report():
    t = memory.track(fw.zeros(1024), "activation")
    del t
    assert live("activation")["peak_bytes"] == 4096
    memory.reset_peak()
    assert live("activation")["peak_bytes"] == 0
    grad = memory.track(fw.zeros(3, 4, dtype=fw.float64), "gradient")
    text = memory.report()
    assert text.splitlines()[0] == "memory on cpu (policy default, limit none)"
    assert "  gradient                96 B        96 B       1" in text
    assert "pool: reserved 0 B, free 0 B, hits 0, misses 0" in text
    assert grad.shape == (3, 4)
