"""ThreadChoice: which mode runs, when the other is probed, and when it switches, on a fake
clock (each run advances it by its mode's cost)."""

from __future__ import annotations

import pytest

from fw_edge import thread_choice
from fw_edge.thread_choice import ThreadChoice


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _choice(costs):
    """A ThreadChoice over two runs costing ``costs[mode]`` (a list: one cost per call, or a
    number), recording the modes they ran in."""
    clock, ran = _Clock(), []

    def runner(mode):
        def run(args):
            cost = costs[mode]
            clock.now += cost.pop(0) if isinstance(cost, list) else cost
            ran.append(mode)
            return (mode, args)
        return run
    return ThreadChoice((runner(0), runner(1)), clock=clock), ran


def test_it_starts_on_one_thread_and_stays_while_the_probes_lose():
    choice, ran = _choice({0: 35.0, 1: 1.0})
    for _ in range(200):
        assert choice("x")[1] == "x"
    assert choice.mode == 1
    probes = [i for i, mode in enumerate(ran) if mode == 0]
    gaps = [b - a for a, b in zip(probes, probes[1:])]
    assert probes[0] == thread_choice.WINDOW  # after WINDOW calls on one thread
    assert gaps == sorted(gaps) and gaps[-1] > gaps[0]  # probes back off
    assert len(probes) <= 8


def test_the_longest_gap_between_probes_is_bounded():
    choice, ran = _choice({0: 35.0, 1: 1.0})
    for _ in range(3000):
        choice(None)
    probes = [i for i, mode in enumerate(ran) if mode == 0]
    assert max(b - a for a, b in zip(probes, probes[1:])) == thread_choice.LONGEST + 1


def test_it_switches_when_a_probe_wins_and_back_when_the_load_changes():
    costs = {0: 0.8, 1: 1.0}
    choice, ran = _choice(costs)
    for _ in range(10):
        choice(None)
    assert choice.mode == 0 and ran[thread_choice.WINDOW] == 0
    costs[0] = 30.0  # the machine gets busy: its threads now cost 30, one thread still 1
    for _ in range(20):
        choice(None)
    assert choice.mode == 1


@pytest.mark.parametrize("first", [0, 1])
def test_results_come_from_the_mode_that_ran(first):
    choice, ran = _choice({0: 1.0, 1: 2.0} if first == 0 else {0: 2.0, 1: 1.0})
    results = [choice(i) for i in range(12)]
    assert [mode for mode, _ in results] == ran
    assert [args for _, args in results] == list(range(12))


def test_a_frozen_choice_runs_one_mode_and_never_probes():
    choice, ran = _choice({0: 1.0, 1: 35.0})  # probing would switch to mode 0
    choice.freeze()
    for _ in range(100):
        choice(None)
    assert set(ran) == {1} and choice.times == ([], [])
    choice.freeze(0)
    choice(None)
    assert ran[-1] == 0
    with pytest.raises(ValueError, match="mode must be 0"):
        choice.freeze(2)
