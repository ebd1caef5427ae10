"""Allocations larger than the device can give: an OutOfMemoryError saying how many bytes were
asked for and what the device has, before trying on the CPU, and in place of NumPy's
MemoryError (or a KernelError blaming a plugin) when a kernel runs out anyway."""

from types import SimpleNamespace

import pytest

import fw_core as fw
from fw_core.device import registry
from fw_core.errors import FwError, OutOfMemoryError
from fw_core.ops import allocation, creation
from fw_core.ops.linalg import OUTER


def _kernel_must_not_run(**_):
    raise AssertionError("the kernel ran")


def test_a_request_over_the_machine_is_refused_before_the_kernel_runs(monkeypatch):
    monkeypatch.setitem(registry.kernels["cpu"], creation.ZEROS, _kernel_must_not_run)
    with pytest.raises(OutOfMemoryError) as info:
        fw.zeros(10 ** 6, 10 ** 6)
    err = info.value
    assert isinstance(err, MemoryError) and isinstance(err, FwError)
    total, available = allocation.host_memory()
    text = str(err)
    assert text.startswith("zeros: asks for 3.6 TiB (4,000,000,000,000 bytes)")
    assert f"{total / 2 ** 30:.1f} GiB of RAM" in text and "available" in text
    assert err.inputs == "shape=(1000000, 1000000), dtype=float32" and err.hint


def test_the_threshold_is_what_is_available_now(monkeypatch):
    monkeypatch.setattr(allocation, "host_memory", lambda: (8 * 2 ** 30, 100 * 2 ** 20))
    monkeypatch.setitem(registry.kernels["cpu"], creation.ONES, _kernel_must_not_run)
    with pytest.raises(OutOfMemoryError, match=r"asks for 128\.0 MiB .* 8\.0 GiB of RAM, "
                                               r"100\.0 MiB available"):
        fw.ones(32, 2 ** 20)  # 128 MiB of float32 > the 100 MiB available
    assert fw.zeros(16, 2 ** 20).shape == (16, 2 ** 20)  # 64 MiB fits


def test_small_requests_do_not_read_the_free_memory(monkeypatch):
    def unreadable():
        raise AssertionError("host_memory was read for a small tensor")

    monkeypatch.setattr(allocation, "host_memory", unreadable)
    assert fw.zeros(1024, 1024).shape == (1024, 1024) and fw.randn(8).shape == (8,)


def test_a_memory_error_from_numpy_becomes_an_fw_error(monkeypatch):
    def out_of_memory(**_):
        raise MemoryError("Unable to allocate 64.0 MiB")

    monkeypatch.setitem(registry.kernels["cpu"], creation.ONES, out_of_memory)
    with pytest.raises(OutOfMemoryError, match=r"^ones: asks for 64\.0 MiB \(67,108,864 "
                                               r"bytes\) for a float32 tensor of shape"):
        fw.ones(4096, 4096)


def test_a_kernel_out_of_memory_is_not_blamed_on_the_plugin(monkeypatch):
    def out_of_memory(a, b):
        raise MemoryError

    monkeypatch.setitem(registry.kernels["cpu"], OUTER, out_of_memory)
    with pytest.raises(OutOfMemoryError) as info:
        fw.outer(fw.ones(3), fw.ones(4))
    assert "float32 tensor of shape (3, 4)" in str(info.value)
    assert "plugin" not in str(info.value)
    assert info.value.inputs == "float32[3] on cpu, float32[4] on cpu"


def test_random_draws_check_and_convert_too(monkeypatch):
    with pytest.raises(OutOfMemoryError, match="^randn: asks for"):
        fw.randn(10 ** 7, 10 ** 7)
    monkeypatch.setattr(creation, "check_allocation", lambda *a: None)
    with pytest.raises(OutOfMemoryError, match="^rand: asks for"):  # NumPy's own MemoryError
        fw.rand(10 ** 7, 10 ** 7)


def test_a_device_without_host_memory_reports_its_allocator():
    spec = SimpleNamespace(array_type=list, allocator_usage=lambda index: (2 ** 20, 2 ** 21))
    device = type("FakeDevice", (), {"spec": spec, "index": 0, "__str__": lambda s: "npu:0"})()
    err = allocation.out_of_memory("zeros", 2 ** 40, device, "shape=(1024, 2 ** 28)")
    assert "asks for 1.0 TiB (1,099,511,627,776 bytes) for its result" in str(err)
    assert "npu:0 reports no capacity; its allocator holds 1.0 MiB in live arrays " \
           "(2.0 MiB reserved)" in str(err)
    allocation.check_allocation("zeros", (2 ** 40,), fw.float32, device, {})  # no capacity: tries
