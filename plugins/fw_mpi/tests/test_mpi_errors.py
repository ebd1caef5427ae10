"""Errors raised before any communication (unknown reductions, integer means, reduce_scatter
shapes, nothing to train) and an unused parameter reported at the next forward, on every rank."""

from mpirun import by_rank, run


def test_refusals_name_the_problem_and_the_fix():
    for got in by_rank(run(2, "scenarios.py", "refusals"), 2).values():
        errors = got["errors"]
        assert "use one of sum, mean, max, min, prod" in errors["op"]
        assert "integer tensor (int64)" in errors["int_mean"]
        assert "splits dimension 0 into 2 equal parts, got shape (3,)" in errors["scatter_shape"]
        assert "no parameter that requires grad" in errors["frozen"]
        assert "unused.bias, unused.weight received no gradient" in errors["unused"]
        assert got["mean"] == got["input"] and got["gather"] == [got["input"]] * 2
