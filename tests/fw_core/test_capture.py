"""The capture interface: what a recorder hears of a run, and what inspectors learn of each op."""

import pathlib

import numpy as np
import pytest

import fw_core as fw
from fw_core import capture
from fw_core.records import Inspector


class Log:
    """A recorder that writes down every call fw makes to it."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        def called(*args, **kwargs):
            self.calls.append(name)

        return called

    def names(self, *wanted):
        return [c for c in self.calls if c in wanted]


def test_a_recorder_hears_every_site_outside_the_op_layer():
    model = fw.nn.Linear(3, 2)
    opt = fw.optim.SGD(model.parameters(), lr=0.1)
    x = fw.tensor(np.ones((4, 3), np.float32))
    log = Log()
    with capture.recording(log):
        loss = (model(x) + fw.tensor([1.0, 2.0])).sum()
        loss.backward()
        fw.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        loss.item()
    assert log.names("module_called") == ["module_called"]
    assert log.names("backward") == ["backward", "backward"]
    assert log.names("grad_set") == ["grad_set", "grad_set"]  # weight and bias
    assert log.names("host_effect") == ["host_effect"] * 2  # clip_grad_norm_, zero_grad
    assert log.names("optimizer_step") == ["optimizer_step"]
    assert log.names("host_read") == ["host_read"]
    assert log.names("created") == ["created"]  # fw.tensor(...)
    assert "on_op" in log.calls
    assert capture.recorder() is None
    assert model.weight.grad is None  # zero_grad really ran


def test_host_effects_run_once_and_unrecorded():
    log, ran = Log(), []
    with capture.recording(log):
        capture.host_effect("step", lambda: ran.append(capture.recorder()))
    assert ran == [None]  # the code ran once, with no recorder watching it
    assert capture.host_effect("step", lambda: 5) == 5  # no recorder: it simply runs


def test_one_recorder_per_thread_and_paused_blocks():
    log = Log()
    with capture.recording(log):
        with pytest.raises(RuntimeError, match="already capturing"):
            with capture.recording(Log()):
                pass
        with capture.paused():
            fw.tensor([1.0]).item()
        assert capture.recorder() is log
    assert log.names("host_read", "created") == []


def test_op_events_carry_the_node_and_whether_a_gradient_rule_ran_them():
    events = []
    spy = Inspector(name="test.spy", on_op=events.append)
    x = fw.tensor([0.5, 2.0], requires_grad=True)
    with fw.inspectors.activated(spy):
        y = fw.exp(x)
        y.sum().backward()
    forward = next(e for e in events if e.op.name == "exp" and e.phase == "forward"
                   and not e.in_backward)
    assert forward.node is y.grad_fn and not forward.in_vjp
    vjp = next(e for e in events if e.op.name == "exp" and e.phase == "backward")
    assert vjp.node is y.grad_fn and vjp.in_vjp and vjp.in_backward
    rule_ops = [e for e in events if e.phase == "forward" and e.in_vjp]
    assert rule_ops and all(e.in_backward for e in rule_ops)  # exp's rule multiplies by y


def test_only_capture_and_the_compiler_know_the_recorder():
    root = pathlib.Path(fw.__file__).parent
    allowed = {"capture.py", "inspectors.py", "_state.py"}
    knowing = [str(p.relative_to(root)) for p in root.rglob("*.py")
               if p.name not in allowed and "compile" not in p.parts
               and ("state.recorder" in p.read_text() or "Tracer" in p.read_text())]
    assert knowing == []
