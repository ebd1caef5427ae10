"""Which kernels run: the static op table, selective imports, and providers' records chosen
by priority and guard."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from fwm_writer import Builder

import fw_edge
from fw_edge import registry
from fw_edge.kernel_api import Kernel, Writes

PACKAGE_ROOT = Path(__file__).parents[1]


def _python(code: str) -> str:
    result = subprocess.run([sys.executable, "-I", "-c", textwrap.dedent(code)],
                            capture_output=True, text=True, check=True,
                            env={"PYTHONPATH": str(PACKAGE_ROOT)})
    return result.stdout


def _neg_program(tmp_path) -> Path:
    b = Builder()
    x = b.input("x", "float32", [3])
    b.output(b.pointwise([x], [["neg", ["arg", 0]]], ["step", 0], "float32", [3]), "output")
    return b.save(tmp_path / "neg.fwm")


def test_supported_ops_imports_no_kernel_module():
    out = _python("""
        import sys, fw_edge
        ops = fw_edge.supported_ops(providers=False)
        assert {"linear", "conv2d", "lstm_layer", "pointwise"} <= ops
        print(sorted(m for m in sys.modules if m.startswith("fw_edge.kernels.")))
        print("numpy" in sys.modules)
    """)
    assert out.split() == ["[]", "False"]


def test_load_imports_only_the_families_a_program_uses(tmp_path):
    path = _neg_program(tmp_path)
    out = _python(f"""
        import sys, numpy as np, fw_edge
        prog = fw_edge.load({str(path)!r}, providers=False)
        print(prog(np.ones(3, np.float32)).tolist())
        print(sorted(m for m in sys.modules if m.startswith("fw_edge.kernels.")))
        print(any(m.startswith(("fw_core", "scipy", "numba", "pluggy")) for m in sys.modules))
    """)
    assert out.splitlines() == ["[-1.0, -1.0, -1.0]",
                                "['fw_edge.kernels.blocks', 'fw_edge.kernels.erf', "
                                "'fw_edge.kernels.gelu', 'fw_edge.kernels.pointwise']",
                                "False"]


def test_every_table_op_has_a_kernel_in_its_module():
    import importlib

    for op, module in registry.FAMILIES.items():
        records = importlib.import_module(f"fw_edge.kernels.{module}").KERNELS
        assert any(r.op == op for r in records), op


def _constant_kernel(value):
    def factory(spec):
        return Writes(lambda out, *xs: out.fill(value))
    return factory


def test_providers_win_by_priority_when_their_guard_accepts(tmp_path, monkeypatch):
    records = [Kernel("pointwise", _constant_kernel(7.0), priority=5,
                      guard=lambda spec: spec.inputs[0].shape == (3,)),
               Kernel("pointwise", _constant_kernel(9.0), priority=1),
               Kernel("erfinv", _constant_kernel(0.0))]
    monkeypatch.setattr(registry, "_providers", [("test", records)])
    assert "erfinv" in fw_edge.supported_ops()
    prog = fw_edge.load(_neg_program(tmp_path))
    np.testing.assert_array_equal(prog(np.ones(3, np.float32)), [7, 7, 7])
    own = fw_edge.load(_neg_program(tmp_path), providers=False)
    np.testing.assert_array_equal(own(np.ones(3, np.float32)), [-1, -1, -1])


def test_a_node_no_guard_accepts_is_an_error_at_planning(tmp_path):
    b = Builder()
    x = b.input("x", "float32", [3])
    b.output(b.node("pad", [x], "float32", [5], module="p", pad_width=((1, 1),),
                    mode="reflect", value=0))
    prog = fw_edge.load(b.save(tmp_path / "pad.fwm"))
    with pytest.raises(fw_edge.EdgeError, match="no kernel .* runs pad at p"):
        prog(np.ones(3, np.float32))
