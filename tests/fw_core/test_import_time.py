"""What ``import fw_core`` leaves unimported, and that first use imports it and works.

Each check runs in a fresh interpreter, so no module an earlier test imported can hide an
eager import. The times themselves are measured by ``benchmarks/import_time.py``.
"""

import importlib.util
import json
import subprocess
import sys

import pytest

HEAVY = ("cupy", "cupyx", "scipy", "numba", "llvmlite", "matplotlib", "onnx", "tensorboardX",
         "fw_debugger.record", "fw_viz.graph")


def fresh(code: str) -> dict:
    """Run ``code`` after ``import fw_core as fw`` in a new interpreter; it sets ``out``."""
    script = ("import json, sys\nimport fw_core as fw\n" + code +
              "\nprint(json.dumps(out))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_loads_no_heavy_module_and_lists_every_plugin():
    out = fresh(f"out = {{'loaded': [m for m in {HEAVY!r} if m in sys.modules], "
                "'plugins': sorted(i.name for i in fw.plugins.info())}")
    assert out["loaded"] == []
    assert {"fw_cpu", "fw_cuda", "fw_debugger", "fw_viz"} <= set(out["plugins"])


#: the APIs above the tensor library, imported at their first use (``fw.nn`` imports fw_core.nn)
ON_FIRST_USE = ("fw_core.nn", "fw_core.optim", "fw_core.data", "fw_core.io", "fw_core.training",
                "fw_core.distributions", "fw_core.func", "fw_core.utils", "fw_core.cuda",
                "fw_core.backends", "fw_onednn.capi")


def test_import_leaves_the_high_level_apis_and_onednn_to_their_first_use():
    out = fresh(f"before = [m for m in {ON_FIRST_USE!r} if m in sys.modules]\n"
                "layer = fw.nn.Linear(3, 2)\n"
                "step = fw.optim.SGD(layer.parameters(), lr=0.1)\n"
                "loader = fw.utils.data.DataLoader(fw.utils.data.TensorDataset(fw.ones(4, 3)))\n"
                "out = {'before': before, 'compile': repr(fw.compile), 'model': fw.Model.__name__,"
                " 'after': [m for m in "
                f"{ON_FIRST_USE!r} if m in sys.modules]}}")
    assert out["before"] == []
    assert out["compile"] == "<fw.compile>" and out["model"] == "Model"
    assert {"fw_core.nn", "fw_core.optim", "fw_core.data", "fw_core.utils",
            "fw_onednn.capi"} <= set(out["after"])


def test_first_cpu_op_imports_scipy_for_its_kernel_and_computes():
    out = fresh("before = 'scipy' in sys.modules\n"
                "y = fw.sigmoid(fw.tensor([0.0, 2.0]))\n"
                "out = {'before': before, 'after': 'scipy' in sys.modules, 'y': y.tolist()}")
    assert not out["before"] and out["after"]
    assert out["y"] == pytest.approx([0.5, 0.8807970779778823], rel=1e-6)


def test_compiled_function_runs_without_numba_imported_at_import():
    out = fresh("f = fw.compile(lambda x: fw.relu(x * 2.0 + 1.0))\n"
                "before = 'numba' in sys.modules\n"
                "y = f(fw.tensor([[-3.0, 1.0]] * 64))\n"
                "out = {'before': before, 'y': y.tolist()[0]}")
    assert not out["before"]
    assert out["y"] == [0.0, 3.0]


def test_first_numba_kernel_imports_numba_and_computes():
    # fw_cpu's fused Adam is a Numba kernel, taken from MIN_ELEMENTS elements on
    out = fresh("from fw_cpu import fused_optim\n"
                "p = fw.nn.Parameter(fw.ones(fused_optim.MIN_ELEMENTS))\n"
                "opt = fw.optim.Adam([p], lr=0.1)\n"
                "(p * p).sum().backward()\n"
                "before = 'numba' in sys.modules\n"
                "opt.step()\n"
                "out = {'before': before, 'after': 'numba' in sys.modules,"
                " 'p': p[:2].tolist()}")
    assert not out["before"] and out["after"]
    assert out["p"] == pytest.approx([0.9, 0.9], rel=1e-6)  # Adam's first step: lr * sign(g)


@pytest.mark.skipif(importlib.util.find_spec("cupy") is None,
                    reason="the probe needs CuPy installed")
def test_plugin_listing_probes_cuda_and_says_why_it_is_unusable():
    out = fresh("before = 'cupy' in sys.modules\n"
                "row = next(i for i in fw.plugins.info() if i.name == 'fw_cuda')\n"
                "out = {'before': before, 'after': 'cupy' in sys.modules, 'state': row.state,"
                " 'reason': row.reason, 'kernels': len(set(row.provides['kernels'])),"
                " 'table': sum(r['device'] == 'cuda' for r in fw.plugins.dispatch_table())}")
    assert not out["before"] and out["after"]
    if out["state"] == "no device":  # a machine without a GPU
        assert "no CUDA device" in out["reason"]
    # one dispatch row per (op, device), whatever number of kernels (a guarded one above the
    # generic one) serve it
    assert out["kernels"] > 100 and out["table"] == out["kernels"]


def test_fw_plugins_command_names_why_cuda_is_unusable():
    done = subprocess.run([sys.executable, "-m", "fw_core.cli", "plugins"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("fw_cuda"))
    if "no device" in row:  # a machine without a GPU (or CuPy): the reason follows the row
        assert "reason: cuda: " in done.stdout
    else:
        assert "loaded" in row
