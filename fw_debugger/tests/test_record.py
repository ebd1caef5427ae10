"""Recorded traces: capture, queries, rows, files, ring buffer, value budget, memory pressure,
comparing two runs and stepping through one."""

from __future__ import annotations

import importlib
import types

import numpy as np
import pytest

import fw_core as fw
import fw_debugger

record, compare = fw_debugger.record, fw_debugger.compare
step, Trace = fw_debugger.step, fw_debugger.Trace
#: the module (``fw_debugger.record`` is the function)
record_module = importlib.import_module("fw_debugger.record")


class Net(fw.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU())
        self.head = fw.nn.Linear(8, 3)

    def forward(self, x):
        return fw.softmax(self.head(self.encoder(x)), dim=1)


@pytest.fixture
def net():
    fw.manual_seed(0)
    return Net()


@pytest.fixture
def x():
    return fw.tensor(np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32))


def run(net, x, **options):
    for p in net.parameters():
        p.grad = None  # the same ops every run: no accumulation into earlier gradients
    with record(**options) as trace:
        net(x).sum().backward()
    return trace


def test_record_captures_forward_and_backward_with_modules_kernels_and_summaries(net, x):
    trace = run(net, x)
    first = trace.events[0]
    assert (first.index, first.op, first.module, first.phase, first.kind) == \
        (0, "linear", "encoder.0", "forward", "op")
    assert first.input_shapes == ((5, 4), (8, 4), (8,))
    assert first.output_shapes == ((5, 8),) and first.output_dtypes == ("float32",)
    assert (first.device, first.kernel) == ("cpu", "fw_cpu")
    assert first.elapsed_s >= 0 and first.values is None
    relu = trace.find(op="relu", phase="forward")[0]
    expected = np.maximum(net.encoder[0](x).detach().numpy(), 0)
    stats = relu.summaries[0]
    assert stats["zeros"] == int((expected == 0).sum())
    assert stats["min"] == 0.0 and stats["max"] == pytest.approx(float(expected.max()))
    assert stats["mean"] == pytest.approx(float(expected.mean()), rel=1e-6)
    grads = [e for e in trace if e.kind == "vjp"]
    assert [e.op for e in grads] == ["sum", "softmax", "linear", "relu", "linear"]
    assert all(e.phase == "backward" for e in grads)
    assert grads[-1].output_shapes == (None, (8, 4), (8,))  # no gradient for the input x
    assert trace.find(op="matmul")[0].phase == "backward"  # an op of a gradient rule
    assert [e.index for e in trace] == list(range(len(trace)))
    assert "linear" in trace.events[0].describe() and "backward" in trace.summary(50)


def test_find_matches_module_globs_ops_and_phase(net, x):
    trace = run(net, x)
    encoder = trace.find(module="encoder.*")
    assert encoder and all(e.module.startswith("encoder.") for e in encoder)
    assert {e.op for e in trace.find(module="encoder.*", phase="forward")} == {"linear", "relu"}
    assert [e.op for e in trace.find(op="softmax", phase="forward")] == ["softmax"]
    assert trace.find(op="soft*", phase="backward")[0].kind == "vjp"
    assert trace.find(module="decoder.*") == []


def test_to_records_gives_flat_rows_for_pandas(net, x):
    pandas = pytest.importorskip("pandas")
    trace = run(net, x)
    rows = trace.to_records()
    assert len(rows) == len(trace)
    assert all(isinstance(v, (str, int, float, bool, type(None))) for r in rows for v in r.values())
    frame = pandas.DataFrame(rows)
    linear = frame[(frame.op == "linear") & (frame.phase == "forward")]
    assert list(linear.module) == ["encoder.0", "head"]
    assert linear.iloc[0].output_shapes == "(5, 8)" and linear.iloc[0].nan == 0


def test_save_and_load_round_trip_with_full_values(net, x, tmp_path):
    trace = run(net, x, values="full")
    assert all(e.values is not None for e in trace)
    path = trace.save(tmp_path / "run.json")
    assert path.exists() and (tmp_path / "run.npz").exists()
    loaded = Trace.load(path)
    assert len(loaded) == len(trace) and loaded.values == "full"
    for a, b in zip(trace, loaded):
        assert (a.op, a.module, a.phase, a.kind, a.kernel) == (b.op, b.module, b.phase, b.kind,
                                                               b.kernel)
        assert a.input_shapes == b.input_shapes and a.output_dtypes == b.output_dtypes
        assert a.summaries == b.summaries
        for va, vb in zip(a.values, b.values):
            assert (va is None and vb is None) or np.array_equal(va, vb)
    assert compare(trace, loaded) is None
    assert loaded.value_bytes_held == trace.value_bytes_held > 0


def test_summary_traces_save_without_values(net, x, tmp_path):
    trace = run(net, x)
    loaded = Trace.load(trace.save(tmp_path / "run.json"))
    assert not (tmp_path / "run.npz").exists()
    assert all(e.values is None for e in loaded) and len(loaded) == len(trace)


def test_bounded_keeps_the_last_events_and_their_values_only(net, x):
    full = run(net, x)
    trace = run(net, x, bounded=4, values="full")
    assert len(trace) == 4
    assert [e.index for e in trace] == [e.index for e in full.events[-4:]]
    assert trace.value_bytes_held == sum(v.nbytes for e in trace for v in e.values
                                         if v is not None)


def test_value_budget_is_respected_and_noted(net, x):
    before = fw.memory.summary("cpu")["cpu"]["debug"]["live_bytes"]
    trace = run(net, x, values="full", value_bytes=300)
    kept = [e for e in trace if e.values is not None]
    assert kept and len(kept) < len(trace)
    assert trace.value_bytes_held == sum(v.nbytes for e in kept for v in e.values
                                         if v is not None) <= 300
    assert any("budget" in note for note in trace.notes)
    assert all(e.memory_tag == "debug" for e in kept)
    debug = fw.memory.summary("cpu")["cpu"]["debug"]["live_bytes"]
    assert debug - before == trace.value_bytes_held
    del trace, kept
    assert fw.memory.summary("cpu")["cpu"]["debug"]["live_bytes"] == before


def test_captured_values_are_dropped_first_under_memory_pressure(net, x):
    trace = run(net, x, values="full")
    assert trace.value_bytes_held > 0
    pool = fw.memory.summary("cpu")["cpu"]["pool"]
    try:  # just over the limit: releasing the debug captures is enough
        fw.memory.set_limit(pool["live_bytes"] - 1, "cpu")
    finally:
        fw.memory.set_limit(None, "cpu")
    assert all(e.values is None for e in trace) and trace.value_bytes_held == 0
    assert trace.values == "summary" and any("pressure" in n for n in trace.notes)
    assert all(e.summaries for e in trace)


def test_recordings_nest(net, x):
    with record() as outer:
        net(x)
        with record() as inner:
            fw.relu(x)
    assert [e.op for e in inner] == ["relu"]
    assert [e.op for e in outer][-1] == "relu" and len(outer) == 5


def test_registered_inspector_records_into_the_session_trace(x):
    session = record_module.SESSION
    start = len(session)
    with fw.inspectors.activated(record_module.INSPECTOR):
        fw.exp(x)
    assert len(session) == start + 1 and session.events[-1].op == "exp"


def test_bad_options_raise_clear_errors():
    with pytest.raises(fw.errors.FwError, match="values="):
        record(values="everything").__enter__()
    with pytest.raises(fw.errors.FwError, match="bounded"):
        Trace(bounded=0)


def test_cpu_fallbacks_name_the_kernel_that_really_ran():
    recorder = record_module._Recorder(Trace())
    recorder.kernels = {("op", "gpu"): ("cpu fallback", "cpu fallback (no kernel on this device)"),
                        ("op", "cpu"): ("fw_cpu", "only kernel registered")}
    event = types.SimpleNamespace(op=types.SimpleNamespace(name="op"), inputs=(), attrs={})
    assert recorder._kernel(event, "gpu") == ("fw_cpu on cpu (fallback)",
                                              "cpu fallback (no kernel on this device)")


# -- compare ------------------------------------------------------------------------------------
def test_compare_finds_the_first_divergence_after_perturbing_one_weight(net, x):
    before = run(net, x, values="full")
    assert compare(before, run(net, x, values="full")) is None
    hidden = net.encoder(x).detach().numpy()
    unit = int(np.abs(hidden).max(axis=0).argmax())  # a hidden unit that is not dead
    with fw.no_grad():
        net.head.weight.data._data[1, unit] += 0.5
    after = run(net, x, values="full")
    found = compare(before, after)
    head = before.find(module="head", phase="forward")[0]
    assert (found.position, found.op, found.module, found.reason, found.output) == \
        (head.index, "linear", "head", "values", 0)
    assert found.max_abs_diff == pytest.approx(0.5 * np.abs(hidden[:, unit]).max(), rel=1e-4)
    assert found.max_rel_diff > 0
    assert "head" in str(found) and "max abs diff" in str(found)


def test_compare_on_summaries_and_on_structure(net, x):
    before = run(net, x)
    with record() as shorter:
        net(x)
    assert compare(before, shorter).reason == "length"
    assert compare(shorter, shorter) is None
    with fw.no_grad():
        net.head.bias.data._data[0] += 1.0
    found = compare(before, run(net, x))
    assert (found.op, found.module, found.reason) == ("linear", "head", "statistics")
    with record() as other:
        net(fw.tensor(np.zeros((2, 4), np.float32)))
    assert compare(shorter, other).reason == "shape"


# -- step ---------------------------------------------------------------------------------------
def test_step_walks_a_recorded_run_node_by_node(net, x, capsys):
    trace = run(net, x)
    walk = step(trace)
    assert walk.line().startswith("at the start")
    assert next(walk) is trace.events[0]
    assert walk.line().startswith(f"[1/{len(trace)}]") and "linear" in walk.line()
    relu = walk.until(op="relu")
    assert relu.op == "relu" and walk.current is relu
    assert walk.back() is trace.events[0]
    assert len(list(walk)) == len(trace) - 1
    assert walk.until(op="relu") is None
    echo = step(trace, echo=True)
    next(echo)
    assert "encoder.0" in capsys.readouterr().out


def test_public_names_are_the_functions_even_after_their_modules_are_imported():
    importlib.import_module("fw_debugger.compare")
    importlib.import_module("fw_debugger.dispatch")
    assert fw_debugger.record is record and fw_debugger.compare is compare
    assert fw_debugger.step is step and fw_debugger.Trace is Trace
