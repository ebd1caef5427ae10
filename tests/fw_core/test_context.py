"""fw.context: presets over the scheduler knobs and memory policy, nesting, and the doc table."""

import pathlib

import pytest

from fw_core import inspectors, memory, scheduler
from fw_core.context import PRESETS, context
from fw_core.errors import ArgumentError
from fw_core.records import Inspector

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "performance.md"


@pytest.fixture(autouse=True)
def clean_scheduler():
    scheduler.reset()
    yield
    scheduler.reset()


def test_a_preset_sets_every_knob_and_exit_restores_them():
    before = scheduler.knobs()
    with context("low_memory") as ctx:
        knobs = scheduler.knobs()
        assert knobs.name == "low_memory" == context.current()
        assert (knobs.max_plans, knobs.bucket_after, knobs.memory_policy) == (4, 2, "low_memory")
        assert memory.pool("cpu").policy.name == "low_memory"
        assert repr(ctx) == "fw.context('low_memory')"
    assert scheduler.knobs() == before
    assert memory.pool("cpu").policy.name == "default"


def test_contexts_nest_and_restore_on_error():
    with context("throughput"):
        with pytest.raises(RuntimeError), context("debug"):
            assert scheduler.knobs().enabled is False
            assert scheduler.should_compile("f", 10) is False
            raise RuntimeError("boom")
        assert scheduler.knobs().name == "throughput" and scheduler.knobs().bucket_after == 8
    assert context.current() == "default"


def test_context_works_as_a_decorator_also_recursively():
    seen = []

    @context("low_latency")
    def count_down(n):
        seen.append(scheduler.knobs().compile_after)
        if n:
            count_down(n - 1)

    count_down(2)
    assert seen == [1, 1, 1] and context.current() == "default"


def test_debug_switches_on_the_anomaly_inspector_only_when_registered(monkeypatch):
    monkeypatch.delitem(inspectors._registered, "fw_debugger.anomaly", raising=False)
    with context("debug"):
        assert "fw_debugger.anomaly" not in inspectors.active()  # not installed: nothing to do
    monkeypatch.setitem(inspectors._registered, "fw_debugger.anomaly",
                        Inspector("fw_debugger.anomaly"))
    with context("debug"):
        assert "fw_debugger.anomaly" in inspectors.active()
    assert "fw_debugger.anomaly" not in inspectors.active()


def test_unknown_preset_names_the_valid_ones():
    with pytest.raises(ArgumentError, match="unknown context 'fast'") as info:
        context("fast")
    assert info.value.hint == "use one of low_latency, throughput, low_memory, debug"


def test_every_preset_is_a_valid_knob_set():
    for name in PRESETS:
        with context(name):
            assert scheduler.knobs().name == name


def doc_table() -> dict[str, dict[str, str]]:
    """The presets table of docs/performance.md: {preset: {column: cell}}."""
    lines = DOC.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| preset |"))
    header = [cell.strip() for cell in lines[start].strip("|").split("|")]
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip().strip("`") for cell in line.strip("|").split("|")]
        rows[cells[0]] = dict(zip(header[1:], cells[1:]))
    return rows


def test_the_docs_table_is_the_presets_table():
    expected = {name: {knob: "—" if value is None else str(value)
                       for knob, value in preset.items()} for name, preset in PRESETS.items()}
    assert doc_table() == expected
