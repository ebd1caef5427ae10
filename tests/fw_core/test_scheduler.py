"""fw.scheduler: knobs, decisions with an audit log, freeze, export and replay."""

import json

import pytest

from fw_core import memory, scheduler
from fw_core.errors import ArgumentError
from fw_core.scheduler import Knobs, Scheduler


@pytest.fixture
def s():
    return Scheduler()


def run_workload(s):
    """What a compiler would ask during a short run: the answers, in order."""
    answers = [s.should_compile("step[f32(8,3)]", calls) for calls in (1, 2, 3, 4)]
    answers.append(s.fusion_pays("relu+add", fused_s=1e-6, unfused_s=3e-6))
    answers.append(s.fusion_pays("exp+sum", fused_s=5e-6, unfused_s=4e-6))
    answers += [s.is_dynamic("x", 0, sizes) for sizes in ([8], [8, 9], [8, 9, 10, 11])]
    return answers


def test_default_knobs_and_answers(s):
    assert s.knobs() == Knobs(compile_after=2, fusion="measure", bucket_after=4, max_plans=32,
                              memory_policy="default", enabled=True, name="default")
    assert run_workload(s) == [False, False, True, True, True, False, False, False, True]


def test_each_subject_is_decided_once_and_logged_with_its_reason(s):
    run_workload(s)
    entries = s.log()
    assert [(e["kind"], e["subject"], e["choice"]) for e in entries] == [
        ("compile", "step[f32(8,3)]", 3), ("fuse", "relu+add", True),
        ("fuse", "exp+sum", False), ("dynamic", "x:dim0", 4)]
    assert [e["seq"] for e in entries] == [0, 1, 2, 3]
    assert entries[0]["reason"] == "compile_after=2: compile from call 3"
    assert entries[0]["stats"] == {"calls": 1} and entries[0]["knobs"] == "default"
    assert entries[2]["reason"] == "measured: fused 5.0 us >= unfused 4.0 us"
    assert entries[2]["stats"] == {"fused_s": 5e-6, "unfused_s": 4e-6}
    assert all(e["mode"] == "fresh" for e in entries)
    assert "#1 fuse relu+add: True — measured: fused 1.0 us < unfused 3.0 us" in s.describe()


def test_knobs_drive_the_answers(s):
    s.configure(compile_after=0, fusion="never", bucket_after=2)
    assert s.knobs().name == "custom"
    assert s.should_compile("f", 1) is True
    assert s.fusion_pays("g", fused_s=1e-9, unfused_s=1.0) is False
    assert s.is_dynamic("x", 1, [3, 4]) is True
    s.configure(fusion="always")
    assert s.fusion_pays("g", fused_s=1.0, unfused_s=1e-9) is True
    s.disable()
    assert s.should_compile("h", 100) is False and s.knobs().name == "custom"
    s.enable()
    assert s.should_compile("h", 100) is True


def test_bad_knobs_are_refused(s):
    with pytest.raises(ArgumentError, match="unknown scheduler knob.*speed") as info:
        s.configure(speed=3)
    assert "compile_after" in info.value.hint
    with pytest.raises(ArgumentError, match="fusion='sometimes'"):
        s.configure(fusion="sometimes")
    with pytest.raises(ArgumentError, match="max_plans=0"):
        s.configure(max_plans=0)
    assert s.knobs() == Knobs()


def test_frozen_decisions_repeat_the_recorded_choice(s):
    assert s.fusion_pays("relu+add", fused_s=1e-6, unfused_s=2e-6) is True
    assert s.should_compile("f", 1) is False  # decided: compile from call 3
    s.freeze()
    assert s.frozen()
    assert s.fusion_pays("relu+add", fused_s=9e-6, unfused_s=2e-6) is True  # would say no now
    last = s.log()[-1]
    assert last["mode"] == "frozen" and last["stats"]["fresh_choice"] is False
    assert s.fusion_pays("new", fused_s=9e-6, unfused_s=2e-6) is False  # new subjects: fresh
    s.configure(compile_after=5)  # knobs change, frozen thresholds do not
    assert s.should_compile("f", 3) is True
    s.unfreeze()
    assert not s.frozen()


def test_replay_makes_the_same_decisions_under_other_knobs(s, tmp_path):
    first = run_workload(s)
    path = s.export(tmp_path / "decisions.jsonl")
    lines = path.read_text().splitlines()
    assert len(lines) == 4 and json.loads(lines[1])["subject"] == "relu+add"

    other = Scheduler()
    other.configure(compile_after=0, fusion="never", bucket_after=1)
    other.replay(path)
    assert run_workload(other) == first
    assert all(e["mode"] == "replayed" for e in other.log())
    assert {m["subject"] for m in other.mismatches()} == {"step[f32(8,3)]", "relu+add",
                                                          "x:dim0"}
    assert all(m["why"] == "differs" for m in other.mismatches())


def test_replay_gives_unknown_subjects_a_fresh_logged_decision(s):
    s.replay([])
    assert s.fusion_pays("mul+tanh", fused_s=1e-6, unfused_s=2e-6) is True
    entry = s.log()[-1]
    assert entry["mode"] == "fresh" and entry["reason"].startswith("not in replayed log")
    assert s.mismatches() == [{"kind": "fuse", "subject": "mul+tanh", "recorded": None,
                               "fresh": True, "why": "not in replayed log"}]
    s.replay(None)
    assert s.mismatches() == []


def test_generic_decide_returns_recorded_choices_in_order(s):
    s.replay([{"kind": "plan", "subject": "f", "choice": "a", "reason": "r1"},
              {"kind": "plan", "subject": "f", "choice": "b", "reason": "r2"}])
    assert [s.decide("plan", "f", "z", "fresh") for _ in range(3)] == ["a", "b", "z"]
    assert [e["reason"] for e in s.log()] == ["r1", "r2", "not in replayed log; fresh"]


def test_memory_policy_knob_selects_the_pools_policy():
    scheduler.reset()
    try:
        scheduler.configure(memory_policy="low_memory")
        assert memory.pool("cpu").policy.name == "low_memory"
        assert scheduler.log()[-1]["kind"] == "memory_policy"
        with pytest.raises(ArgumentError, match="no memory policy named 'nope'"):
            scheduler.configure(memory_policy="nope")
        assert scheduler.knobs().memory_policy == "low_memory"
        assert [e["choice"] for e in scheduler.log()] == ["low_memory"]
    finally:
        scheduler.reset()
    assert memory.pool("cpu").policy.name == "default"
    assert scheduler.log() == [] and scheduler.knobs() == Knobs()
