"""Device selection and its errors, through the runtime seam (no kernel pretends to run)."""

import pytest
from cuda_seams import HAS_GPU, NoDevice, TwoDevices

import fw_core as fw
from fw_core.errors import DeviceError
from fw_cuda import device
from fw_cuda.device import CupyRuntime


@pytest.mark.skipif(HAS_GPU, reason="checks the no-GPU path of the real runtime")
def test_real_runtime_without_gpu_names_cupys_error():
    reason = device.runtime.unavailable_reason()
    assert reason.startswith("no CUDA device: CuPy raised CUDARuntimeError")
    assert "fw-cuda[cuda12]" in reason


@pytest.mark.skipif(HAS_GPU, reason="checks the no-GPU path of the real runtime")
def test_tensor_on_cuda_without_gpu_raises_device_error_with_reason_and_fix():
    with pytest.raises(DeviceError) as caught:
        fw.tensor([1.0, 2.0], device="cuda")
    message = str(caught.value)
    assert "no CUDA device" in message and "CUDARuntimeError" in message
    assert "run on 'cpu'" in message  # what to do


def test_no_device_seam_makes_cuda_unusable(seam):
    seam(NoDevice())
    assert "cuda" not in fw.available_devices()
    with pytest.raises(DeviceError, match="reported by the test seam"):
        fw.tensor([1.0], device="cuda:0")
    with pytest.raises(DeviceError, match="reported by the test seam"):
        fw.nn.Linear(2, 2).to("cuda")


def test_missing_cupy_is_the_reason_and_the_plugin_still_loads(seam):
    seam(CupyRuntime(module="fw_cuda_tests_no_such_cupy"))
    row = next(p for p in fw.plugins.info() if p.name == "fw_cuda")
    assert row.state == "no device"
    assert "CuPy not installed" in row.reason and 'fw-cuda[cuda12]' in row.reason
    assert row.provides["devices"] == ["cuda"] and row.provides["kernels"] == []


def test_device_count_from_the_seam_bounds_the_index(seam):
    seam(TwoDevices())
    assert "cuda" in fw.available_devices()
    assert str(fw.device("cuda:1")) == "cuda:1"
    assert fw.device("cuda") is fw.device("cuda:0")
    with pytest.raises(DeviceError, match="2 cuda device"):
        fw.device("cuda:2")


def test_spec_calls_the_seam_at_call_time(monkeypatch):
    spec = device.cuda_spec()
    swapped = TwoDevices()
    swapped.stage = lambda array, index: ("staged by the seam", index)
    monkeypatch.setattr(device, "runtime", swapped)
    assert spec.count() == 2 and spec.unavailable_reason() is None
    assert spec.stage(None, 1) == ("staged by the seam", 1)  # the DataLoader's copies
