"""fw.cuda: PyTorch's ``torch.cuda`` answers, from whichever plugin provides the ``cuda``
device. A stand-in plugin (a ``cuda`` device on NumPy arrays, two of them) checks what is
asked of the device record; this machine's own fw_cuda checks the no-GPU answers. fw_cuda's
tests check its record's side (``fw_cuda/tests/test_cuda_namespace.py``)."""

import numpy as np
import pytest
import torch

import fw_core as fw
from fw_core.errors import DeviceError, MissingNameError
from fw_core.records import DeviceSpec

PROPERTIES = {"name": "Stand-in GPU", "total_memory": 80 * 2 ** 30, "major": 9, "minor": 0,
              "multi_processor_count": 132}


class StandIn:
    """A plugin whose ``cuda`` device records what fw.cuda asks of it."""

    def __init__(self):
        self.synced, self.released = [], []
        self.usage = (3000, 8192)

    @fw.hookimpl
    def fw_register_devices(self):
        return [DeviceSpec(name="cuda", xp=np, array_type=np.ndarray,
                           from_numpy=lambda a, index: np.array(a), to_numpy=np.asarray,
                           count=lambda: 2, synchronize=self.synced.append,
                           allocator_usage=lambda index: self.usage,
                           release_cached=lambda index: self.released.append(index) or 0,
                           properties=lambda index: {**PROPERTIES, "name": f"GPU {index}"})]


@pytest.fixture
def gpus():
    plugin = StandIn()
    fw.plugins.register(plugin, "standin_cuda")
    fw.plugins.use(["fw_cpu", "standin_cuda"])  # fw_cuda out: the device is the stand-in's
    yield plugin
    fw.plugins.unregister("standin_cuda")
    fw.plugins.use(None)


def test_device_questions_go_to_the_device_record(gpus):
    assert fw.cuda.is_available() and fw.cuda.device_count() == 2
    assert fw.cuda.current_device() == 0
    assert fw.cuda.get_device_name() == "GPU 0" and fw.cuda.get_device_name(1) == "GPU 1"
    props = fw.cuda.get_device_properties("cuda:1")
    assert props.total_memory == 80 * 2 ** 30 and props.multi_processor_count == 132
    assert fw.cuda.get_device_capability(fw.device("cuda:0")) == (9, 0)
    fw.cuda.synchronize()
    fw.cuda.synchronize(1)
    assert gpus.synced == [0, 1]


def test_set_device_makes_cuda_name_that_gpu(gpus):
    fw.cuda.set_device(1)
    assert fw.cuda.current_device() == 1 and fw.cuda.get_device_name() == "GPU 1"
    assert str(fw.tensor([1.0]).to("cuda").device) == "cuda:1"
    fw.cuda.set_device(-1)  # a negative index changes nothing, as in PyTorch
    assert fw.cuda.current_device() == 1
    fw.cuda.set_device("cuda:0")
    assert fw.cuda.current_device() == 0
    with pytest.raises(DeviceError, match="2 cuda device"):
        fw.cuda.set_device(2)
    with pytest.raises(DeviceError, match="expected a cuda device, got cpu"):
        fw.cuda.set_device("cpu")
    with pytest.raises(DeviceError, match="got float"):
        fw.cuda.get_device_name(0.5)


def test_memory_figures_are_the_pools_and_empty_cache_releases_every_gpu(gpus):
    assert fw.cuda.memory_allocated() == 3000  # the device allocator's live bytes
    assert fw.cuda.memory_reserved(0) == 8192
    fw.cuda.reset_peak_memory_stats()
    gpus.usage = (5000, 8192)
    assert fw.cuda.memory_allocated() == 5000
    assert fw.cuda.max_memory_allocated() == 5000
    gpus.usage = (1000, 8192)
    fw.cuda.memory_allocated()
    assert fw.cuda.max_memory_allocated() == 5000  # the peak stays
    fw.cuda.reset_peak_memory_stats(0)
    assert fw.cuda.max_memory_allocated() == 1000
    fw.cuda.empty_cache()
    assert gpus.released == [0, 1]


def test_without_a_gpu_the_quiet_answers_are_pytorchs_and_the_rest_say_why():
    if fw.cuda.is_available():
        pytest.skip("this machine has a usable GPU")
    assert fw.cuda.device_count() == torch.cuda.device_count() == 0
    for name in ("manual_seed", "manual_seed_all"):
        assert getattr(fw.cuda, name)(3) is None and getattr(torch.cuda, name)(3) is None
    fw.cuda.empty_cache()
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved"):
        assert getattr(fw.cuda, name)() == getattr(torch.cuda, name)() == 0
    row = next((i for i in fw.plugins.info() if i.name == "fw_cuda"), None)
    for call in (fw.cuda.current_device, fw.cuda.get_device_name, fw.cuda.synchronize,
                 fw.cuda.get_device_properties, fw.cuda.reset_peak_memory_stats,
                 lambda: fw.cuda.set_device(0)):
        with pytest.raises(DeviceError, match="CUDA is not available") as caught:
            call()
        assert isinstance(caught.value, RuntimeError) and "fw plugins" in caught.value.hint
        if row is not None and row.reason:
            assert row.reason.split(": ", 1)[1] in str(caught.value)


def test_without_a_plugin_for_cuda_the_error_says_which_is_missing():
    fw.plugins.use(["fw_cpu"])
    try:
        assert not fw.cuda.is_available() and fw.cuda.device_count() == 0
        with pytest.raises(DeviceError, match="CUDA is not available: plugin fw_cuda is "
                           "blocked"):
            fw.cuda.current_device()
    finally:
        fw.plugins.use(None)


def test_a_bad_seed_is_refused_and_a_missing_name_is_named():
    for seed, error in (("seven", ValueError), (None, TypeError)):  # int(seed), as torch
        with pytest.raises(error):
            fw.cuda.manual_seed(seed)
        with pytest.raises(error):
            torch.cuda.manual_seed(seed)
    with pytest.raises(MissingNameError, match="fw has no cuda.amp"):
        fw.cuda.amp  # noqa: B018

