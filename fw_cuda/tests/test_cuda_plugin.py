"""fw_cuda as an installed plugin: import, entry point, and its row in ``fw plugins``."""

import importlib_metadata
import pytest
from cuda_seams import HAS_GPU

import fw_core as fw
from fw_core import cli


def test_import_fw_cuda_works_without_gpu():
    import fw_cuda
    import fw_cuda.plugin

    assert fw_cuda.__version__ == "0.1.0"


def test_entry_point_names_the_plugin_module():
    points = {ep.name: ep.value for ep in importlib_metadata.entry_points(group="fw.plugins")}
    assert points["fw_cuda"] == "fw_cuda.plugin"


@pytest.mark.skipif(HAS_GPU, reason="checks the no-GPU row")
def test_fw_plugins_shows_no_cuda_device_and_the_reason(capsys):
    assert cli.main(["plugins"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("fw_cuda"))
    assert "no device" in row and "devices: cuda" in row
    assert "no CUDA device: CuPy raised CUDARuntimeError" in " ".join(out.split())


def test_registers_cuda_memory_policy_and_fusion_rules():
    policy = fw.plugins.memory_policies("cuda")["default"]
    assert policy.release_order[0] == "debug"
    rules = fw.plugins.fusion_rules("cuda")
    assert rules and all(rule.device == "cuda" for rule in rules)


def test_hand_written_kernels_are_guarded_specs_above_the_generic_ones():
    from fw_core.records import LazyKernel
    from fw_cuda import device, plugin
    from fw_cuda.kernels import FAST

    if not device.runtime.installed():
        pytest.skip("no CUDA runtime: fw_cuda registers no kernels")
    specs = plugin.fw_register_kernels()
    fast = {s.op: s for s in specs if s.priority == 1}
    assert set(fast) == set(FAST)
    for op, spec in fast.items():
        assert spec.guard == LazyKernel(plugin.FAST_GUARDS, op) and spec.takes == FAST[op]
        assert any(s.op == op and s.priority == 0 and s.guard is None for s in specs)
