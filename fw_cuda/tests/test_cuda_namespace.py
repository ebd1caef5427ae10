"""fw.cuda answered by fw_cuda: its device record's properties (read from
``cudaGetDeviceProperties`` through CuPy), and on a GPU the real figures."""

from types import SimpleNamespace

import pytest
from cuda_seams import HAS_GPU, NoDevice, TwoDevices

import fw_core as fw
from fw_core.errors import DeviceError
from fw_cuda import device
from fw_cuda.device import CupyRuntime


class Reports(TwoDevices):
    """Two GPUs whose properties come from a stand-in for CuPy's runtime module."""

    def __init__(self):
        super().__init__()
        found = {"name": b"NVIDIA H200", "totalGlobalMem": 150_000_000_000, "major": 9,
                 "minor": 0, "multiProcessorCount": 132, "clockRate": 1_980_000}
        runtime = SimpleNamespace(getDeviceProperties=lambda index: {**found, "minor": index})
        self.stand_in = SimpleNamespace(cuda=SimpleNamespace(runtime=runtime))

    def properties(self, index):
        real = self._cupy
        self._cupy = self.stand_in
        try:
            return CupyRuntime.properties(self, index)
        finally:
            self._cupy = real


def test_properties_are_read_from_cuda_and_named_as_pytorch_names_them(seam):
    seam(Reports())
    props = fw.cuda.get_device_properties(1)
    assert props.name == "NVIDIA H200" and props.total_memory == 150_000_000_000
    assert (props.major, props.minor, props.multi_processor_count) == (9, 1, 132)
    assert fw.cuda.get_device_name() == "NVIDIA H200"
    assert fw.cuda.get_device_capability("cuda:1") == (9, 1)
    assert device.cuda_spec().properties(0)["minor"] == 0


def test_a_device_the_plugin_reports_unusable_gives_its_reason(seam):
    seam(NoDevice())
    assert not fw.cuda.is_available() and fw.cuda.device_count() == 0
    with pytest.raises(DeviceError, match="CUDA is not available: no CUDA device: reported by "
                       "the test seam"):
        fw.cuda.get_device_name()


@pytest.mark.skipif(not HAS_GPU, reason="needs a GPU")
def test_on_a_gpu_the_figures_move_with_the_tensors():
    assert fw.cuda.is_available() and fw.cuda.device_count() >= 1
    assert fw.cuda.get_device_properties().total_memory > 2 ** 30
    assert fw.cuda.get_device_name()
    fw.cuda.synchronize()
    before = fw.cuda.memory_allocated()
    x = fw.ones(1 << 24, device="cuda")  # 64 MiB
    assert fw.cuda.memory_allocated() >= before + (1 << 26)
    assert fw.cuda.max_memory_allocated() >= before + (1 << 26)
    assert fw.cuda.memory_reserved() >= fw.cuda.memory_allocated()
    del x
    fw.cuda.empty_cache()
    assert fw.cuda.memory_reserved() < before + (1 << 26) + (1 << 20)
