"""DataLoader(device=...): batches reach the device one step ahead of the loop.

A test plugin provides device "staged": NumPy arrays, fw_cpu's xp kernels, and a ``stage``
that logs when each copy starts and when its result is first needed. The log shows the order
the loader promises: batch k+1's copies start before batch k is handed out.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest
import scipy.special

import fw_core as fw
from fw_core import hookimpl
from fw_core.records import DeviceSpec, KernelSpec
from fw_cpu.kernels import all_kernels


class StagedDevice:
    """Device "staged": its copies are logged as ("start", first value) and ("ready", ...)."""

    def __init__(self):
        self.log: list[tuple[str, float]] = []
        self.spec = DeviceSpec(name="staged", xp=np, array_type=np.ndarray,
                               from_numpy=lambda a, index: np.array(a, copy=True),
                               to_numpy=lambda a: a, stage=self.stage,
                               description="a test device with asynchronous copies")

    def stage(self, array, index):
        copy = np.array(array, copy=True)
        self.log.append(("start", float(copy.flat[0])))

        def ready():
            self.log.append(("ready", float(copy.flat[0])))
            return copy

        return ready

    @hookimpl
    def fw_register_devices(self):
        return [self.spec]

    @hookimpl
    def fw_register_kernels(self):
        return [KernelSpec(op=name, device="staged", fn=fn)
                for name, fn in all_kernels(np, scipy.special).items()]


@pytest.fixture
def staged():
    device = StagedDevice()
    fw.plugins.register(device, "staged_test_device")
    yield device
    fw.plugins.unregister("staged_test_device")


def _rows(n: int) -> fw.data.TensorDataset:
    x = fw.arange(n * 2, dtype=fw.float32).reshape(n, 2)
    return fw.data.TensorDataset(x, fw.arange(n) + 100)  # labels apart from features


def test_next_batch_is_started_before_this_one_is_handed_out(staged):
    loader = fw.data.DataLoader(_rows(6), batch_size=2, device="staged")
    for x, y in loader:
        staged.log.append(("loop", float(x[0, 0].item())))
        assert x.device == "staged" and y.device == "staged"
    assert [v for kind, v in staged.log if kind == "start"] == [0, 100, 4, 102, 8, 104]
    events = [e for e in staged.log if e[1] in (0.0, 4.0, 8.0) or e[0] == "loop"]
    assert events == [("start", 0.0), ("start", 4.0), ("ready", 0.0), ("loop", 0.0),
                      ("start", 8.0), ("ready", 4.0), ("loop", 4.0), ("ready", 8.0),
                      ("loop", 8.0)]


def test_batches_keep_structure_values_and_the_op_that_made_them(staged):
    Pair = collections.namedtuple("Pair", "features label")

    class Structured(fw.data.Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return {"pair": Pair(np.full(2, i, np.float32), i), "name": f"s{i}"}

    batches = list(fw.data.DataLoader(Structured(), batch_size=2, device="staged"))
    first = batches[0]
    assert isinstance(first["pair"], Pair) and first["name"] == ["s0", "s1"]
    np.testing.assert_array_equal(first["pair"].features.numpy(), [[0, 0], [1, 1]])
    assert first["pair"].label.device == "staged"
    assert first["pair"].features.op == "to_device"
    assert [len(b["name"]) for b in batches] == [2, 1]


def test_devices_without_stage_copy_in_order_and_cpu_is_unchanged():
    x = fw.arange(4, dtype=fw.float32).reshape(2, 2)
    loader = fw.data.DataLoader(fw.data.TensorDataset(x), batch_size=1, device="cpu")
    (first,), (second,) = list(loader)
    assert first.device == "cpu" and second.tolist() == [[2.0, 3.0]]


def test_unusable_device_fails_at_construction_with_the_reason():
    with pytest.raises(fw.errors.DeviceError, match="no device type 'nowhere'"):
        fw.data.DataLoader(_rows(2), device="nowhere")


def test_fit_on_a_device_stages_its_batches(staged):
    fw.manual_seed(0)
    model = fw.Model(fw.nn.Linear(2, 3)).to("staged")
    model.compile(optimizer=fw.optim.SGD(model.module.parameters(), lr=0.01),
                  loss="cross_entropy")
    x = fw.randn(8, 2)
    y = fw.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    history = model.fit(x, y, epochs=2, batch_size=4, verbose=0, compiled=False)
    assert len(history.history["loss"]) == 2
    kinds = [kind for kind, _ in staged.log]
    assert kinds.count("start") == kinds.count("ready") == 2 * 2 * 2  # epochs * batches * (x, y)
    assert kinds[:4] == ["start", "start", "start", "start"]  # batch 2 started before batch 1 ran
