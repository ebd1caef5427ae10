"""Collectives, timeouts, aborts and the sampler under mpiexec -n 2 and 3."""

import numpy as np
import pytest
import torch.utils.data as tud
from mpirun import by_rank, run


@pytest.mark.parametrize("ranks", [2, 3])
def test_collectives_give_numpy_results(ranks):
    seen = by_rank(run(ranks, "scenarios.py", "collectives"), ranks)
    inputs = [np.array(seen[r]["input"]) for r in range(ranks)]
    for r, got in seen.items():
        assert got["size"] == ranks and got["local_rank"] == r
        np.testing.assert_array_equal(got["sum"], sum(inputs))
        np.testing.assert_array_equal(got["mean"], sum(inputs) / ranks)
        np.testing.assert_array_equal(got["max"], np.max(inputs, axis=0))
        np.testing.assert_array_equal(got["min"], np.min(inputs, axis=0))
        np.testing.assert_array_equal(got["broadcast"], inputs[-1])
        np.testing.assert_array_equal(got["gather"], inputs)
        total = sum(np.arange(2 * ranks) + k for k in range(ranks))
        np.testing.assert_array_equal(got["scatter"], total[2 * r:2 * r + 2])


def test_a_late_rank_is_named_by_the_timeout_instead_of_a_hang():
    seen = by_rank(run(3, "scenarios.py", "timeout"), 3)
    assert seen[1]["error"] is None  # it arrived late, after the others gave up
    for r in (0, 2):
        message = seen[r]["error"]
        assert f"did not complete within 1.5 s on rank {r}" in message
        assert "rank(s) 1 did not arrive" in message
        assert "rank 1 last reached collective #1 (barrier here)" in message


def test_an_exception_on_one_rank_aborts_the_job_with_its_traceback_once():
    done = run(2, "scenarios.py", "abort", timeout=50)
    assert done.returncode != 0
    assert done.stderr.count("fw_mpi: rank 1 of 2 raised an uncaught exception") == 1
    assert done.stderr.count("ValueError: boom on rank 1") == 1
    assert "the barrier returned" not in done.stdout


@pytest.mark.parametrize("ranks", [2, 3])
def test_sampler_defaults_to_the_job_and_partitions_as_torch(ranks):
    seen = by_rank(run(ranks, "scenarios.py", "sampler"), ranks)
    for r, got in seen.items():
        for case in got["cases"]:
            n, drop_last = case["length"], case["drop_last"]
            theirs = tud.DistributedSampler(range(n), num_replicas=ranks, rank=r,
                                            shuffle=False, drop_last=drop_last)
            assert case["len"] == len(theirs)
            if not case["shuffle"]:
                assert case["indices"] == list(theirs)
    for i, case in enumerate(seen[0]["cases"]):
        if case["shuffle"]:
            shares = [seen[r]["cases"][i]["indices"] for r in range(ranks)]
            everything = [x for share in shares for x in share]
            n = case["length"]
            if case["drop_last"]:
                assert len(set(everything)) == len(everything)  # no index twice
            else:
                assert set(everything) == set(range(n))  # every index, padding repeats
