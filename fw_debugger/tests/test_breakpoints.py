"""break_on: callbacks (or pdb) on chosen ops, modules, conditions and phases."""

import numpy as np
import pytest

import fw_core as fw
import fw_debugger
from fw_core import nn
from fw_core.errors import FwError
from fw_debugger import break_on


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Block(), Block()])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.head = Block()

    def forward(self, x):
        return self.head(self.encoder(x))


def test_op_and_module_glob_select_events_with_live_tensors():
    net, seen = Net(), []
    with break_on(op="relu", module="encoder.*", callback=seen.append) as point:
        y = net(fw.randn(2, 4))
    assert [e.module for e in seen] == ["encoder.layers.0.act", "encoder.layers.1.act"]
    assert point.hits == 2 and seen[-1].output.shape == (2, 4)
    assert (seen[-1].output.detach().numpy() >= 0).all()
    assert y.shape == (2, 4)
    assert "fw_debugger.breakpoints" not in fw.inspectors.active()


def test_when_decides_on_the_live_tensors():
    seen = []
    x = fw.tensor([[-1.0, 2.0], [3.0, -4.0]])
    with break_on(op=["relu", "exp"], when=lambda e: e.output.max().item() > 2.5,
                  callback=seen.append):
        fw.relu(x)          # max 3: stops
        fw.relu(x * 0.5)    # max 1.5: no
        fw.exp(x)           # max e^3: stops
    assert [e.op.name for e in seen] == ["relu", "exp"]


def test_backward_phase_sees_gradients():
    seen = []
    x = fw.tensor([1.0, 2.0], requires_grad=True)
    point = break_on(op="mul", phase="backward", callback=seen.append)
    try:
        (x * 3).sum().backward()
    finally:
        point.remove()
    point.remove()  # idempotent
    assert len(seen) == 1 and seen[0].phase == "backward"
    np.testing.assert_allclose(seen[0].output[0].numpy(), [3.0, 3.0])


def test_two_breakpoints_and_removal_turns_the_inspector_off():
    a_hits, b_hits = [], []
    a = break_on(op="add", callback=a_hits.append)
    b = break_on(module="", op="add", callback=b_hits.append)
    fw.ones(2) + 1
    a.remove()
    assert "fw_debugger.breakpoints" in fw.inspectors.active()
    fw.ones(2) + 1
    b.remove()
    assert "fw_debugger.breakpoints" not in fw.inspectors.active()
    fw.ones(2) + 1
    assert (len(a_hits), len(b_hits)) == (1, 2)


def test_default_callback_is_pdb_with_the_event(monkeypatch):
    stops = []

    class FakePdb:
        def set_trace(self, frame):
            stops.append(frame.f_locals["event"])

    monkeypatch.setattr(fw_debugger.breakpoints.pdb, "Pdb", FakePdb)
    with break_on(op="neg"):
        -fw.ones(3)
    assert stops[0].op.name == "neg"


def test_bad_arguments():
    with pytest.raises(FwError, match="no op named"):
        break_on(op="relux")
    with pytest.raises(FwError, match="unknown phase"):
        break_on(op="relu", phase="sideways")
    assert "fw_debugger.breakpoints" not in fw.inspectors.active()
