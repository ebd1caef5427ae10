"""``Model.fit(distributed=True)``, ``fw run -n`` and docs/distributed.md's example under
mpiexec; the seam in fw_core without a backend."""

import re
import subprocess
import sys

import pytest
from mpirun import ROOT, WORKERS, by_rank, records, run

import fw_core as fw
from fw_core import distributed
from fw_core.errors import PluginError


@pytest.mark.parametrize("ranks", [2, 3])
def test_distributed_fit_equals_one_process_on_the_global_batches(ranks, tmp_path):
    seen = by_rank(run(ranks, "fit_equality.py", tmp_path / "checkpoint"), ranks)
    main = seen[0]
    assert main["started_apart"] > 0.01
    assert main["weight_diff"] < 1e-6
    assert main["loss_diff"] < 1e-6 and main["accuracy_diff"] == 0.0
    assert main["checkpoint_diff"] == 0.0
    assert main["checkpoints"] == 2
    assert re.search(r"plan_calls [1-9]", main["compiled"]), main["compiled"]  # compiled steps
    for r in range(1, ranks):
        assert seen[r]["checkpoints"] == 0  # file writers run on rank 0 only
        assert seen[r]["loss"] == main["loss"] and seen[r]["accuracy"] == main["accuracy"]


def test_a_checkpoint_of_two_ranks_resumes_on_three(tmp_path):
    by_rank(run(2, "fit_equality.py", tmp_path / "two"), 2)
    seen = by_rank(run(3, "fit_equality.py", tmp_path / "three", tmp_path / "two"), 3)
    main = seen[0]
    assert main["started_apart"] == 0.0  # every rank loaded the same checkpoint
    assert main["checkpoints"] == 1 and len(main["loss"]) == 1
    assert main["weight_diff"] < 1e-6 and main["loss_diff"] < 1e-6
    assert main["checkpoint_diff"] == 0.0


def test_docs_example_runs_on_two_ranks(tmp_path):
    text = (ROOT / "docs" / "distributed.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", text, re.S)
    script = tmp_path / "example.py"
    script.write_text(code)
    done = run(2, str(script))
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.fullmatch(r"accuracy 0\.\d+\n", done.stdout), done.stdout


def test_fw_run_launches_ranks_with_threads_per_rank():
    done = subprocess.run([sys.executable, "-m", "fw_core.cli", "run", "-n", "2", "--threads",
                           "1", str(WORKERS / "scenarios.py"), "collectives"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    seen = by_rank(done, 2)
    assert {r["size"] for r in seen.values()} == {2}


def test_fw_run_reports_the_thread_count_it_sets(tmp_path):
    script = tmp_path / "threads.py"
    script.write_text("import json, os\nprint(json.dumps({'rank': int(os.environ.get("
                      "'PMI_RANK', 0)), 'omp': os.environ['OMP_NUM_THREADS'], "
                      "'blas': os.environ['OPENBLAS_NUM_THREADS']}))\n")
    done = subprocess.run([sys.executable, "-m", "fw_core.cli", "run", "-n", "2", "--threads",
                           "3", str(script)], capture_output=True, text=True, timeout=60,
                          cwd=ROOT)
    seen = by_rank(done, 2)
    assert all(r["omp"] == "3" and r["blas"] == "3" for r in seen.values())
    assert len(records(done.stdout)) == 2


def test_without_a_backend_fit_and_run_name_the_install_command(capsys):
    registered = list(distributed._backends)
    distributed._backends.clear()
    try:
        model = fw.Sequential([fw.nn.Linear(2, 1)]).compile(optimizer="sgd", loss="mse")
        with pytest.raises(PluginError, match=r"pip install fw-mpi\[mpich\]"):
            model.fit(fw.ones(4, 2), fw.ones(4, 1), distributed=True, verbose=0)
        from fw_core import cli

        assert cli.main(["run", "-n", "2", "x.py"]) == 1
        assert "pip install fw-mpi[mpich]" in capsys.readouterr().err
    finally:
        distributed._backends[:] = registered
