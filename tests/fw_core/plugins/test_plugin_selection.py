"""Choosing what loads: FW_PLUGINS (allow-list), FW_DISABLE_PLUGINS (block-list), and
fw.plugins.use() at run time; fw_core itself always loads."""

import pytest

STATES = """
    out["states"] = states("fw_core", "fw_toy", "fw_cube", "fw_tools", "fw_cpu")
    out["reasons"] = {i.name: [i.reason, i.fix] for i in fw.plugins.info() if i.reason}
"""


@pytest.fixture
def three(site):
    return site.install("fw_toy").install("fw_cube").install("fw_tools")


def test_allow_list_loads_only_the_named_plugins(three):
    out = three.python(STATES, """
        out["cube"] = "cube" in fw.OPS
        try:
            fw.device("toy")
        except errors.DeviceError as e:
            out["toy"] = str(e)
    """, FW_PLUGINS="fw_cpu, fw_cube")
    assert out["states"] == {"fw_core": "loaded", "fw_toy": "blocked", "fw_cube": "loaded",
                             "fw_tools": "blocked", "fw_cpu": "loaded"}
    assert out["reasons"]["fw_toy"] == [
        "not in the selected plugins (FW_PLUGINS / fw.plugins.use)",
        "add fw_toy to FW_PLUGINS (or fw.plugins.use([...])) to load it"]
    assert out["cube"] is True
    # the device error says which blocked plugin would provide "toy"
    assert "plugin fw_toy is blocked: not in the selected plugins" in out["toy"]


def test_allow_list_without_fw_cpu_leaves_no_cpu_device(three):
    out = three.python(STATES, """
        out["notes"] = {i.name: i.notes for i in fw.plugins.info()}["fw_cube"]
        try:
            fw.tensor([1.0])
        except errors.DeviceError as e:
            out["error"] = str(e)
    """, FW_PLUGINS="fw_cube")
    assert out["states"]["fw_cpu"] == "blocked" and out["states"]["fw_core"] == "loaded"
    assert out["notes"] == ["kernel cube@cpu ignored: no device 'cpu' is loaded"]
    # the error may start with the op that asked for the device ("tensor: ...")
    assert out["error"].splitlines()[0].endswith("no device type 'cpu' is available")
    assert "plugin fw_cpu is blocked" in out["error"]


def test_block_list_blocks_only_the_named_plugins(three):
    out = three.python(STATES, """
        out["cube"] = "cube" in fw.OPS
        out["toy"] = (fw.tensor([1.0]).to("toy") + 1.0).tolist()
    """, FW_DISABLE_PLUGINS="fw_cube,fw_tools")
    assert out["states"] == {"fw_core": "loaded", "fw_toy": "loaded", "fw_cube": "blocked",
                             "fw_tools": "blocked", "fw_cpu": "loaded"}
    assert out["reasons"]["fw_cube"][0] == "blocked by FW_DISABLE_PLUGINS"
    assert out["cube"] is False
    assert out["toy"] == [2.0]


def test_block_list_wins_over_the_allow_list(three):
    out = three.python(STATES, FW_PLUGINS="fw_cpu,fw_toy", FW_DISABLE_PLUGINS="fw_toy,fw_core")
    assert out["states"]["fw_toy"] == "blocked"
    assert out["reasons"]["fw_toy"][0] == "blocked by FW_DISABLE_PLUGINS"
    assert out["states"]["fw_core"] == "loaded"  # fw_core cannot be blocked


def test_use_reloads_with_a_selection_and_none_restores_the_environment(three):
    out = three.python("""
        import fw_tools
        x = fw.tensor([1.0, 2.0])
        out["first"] = [len(fw_tools.CONFIGS), len(fw_tools.UNCONFIGURED)]
        infos = fw.plugins.use(["fw_cpu", "fw_cube"])
        out["use"] = states("fw_core", "fw_toy", "fw_cube", "fw_tools", "fw_cpu")
        out["use_returns_info"] = [i.name for i in infos] == [i.name for i in fw.plugins.info()]
        out["after_use"] = [len(fw_tools.CONFIGS), len(fw_tools.UNCONFIGURED)]
        out["inspectors"] = fw.inspectors.registered()
        out["rules"] = [r.name for r in fw.plugins.fusion_rules("cpu")]
        out["x_still_works"] = (x + x).tolist()
        try:
            x.to("toy")
        except errors.DeviceError as e:
            out["toy"] = str(e).splitlines()[0]
        fw.plugins.use(None)
        out["restored"] = states("fw_core", "fw_toy", "fw_cube", "fw_tools", "fw_cpu")
        out["after_restore"] = [len(fw_tools.CONFIGS), len(fw_tools.UNCONFIGURED)]
        out["toy_back"] = (x.to("toy") + 1.0).tolist()
    """, FW_DISABLE_PLUGINS="fw_cube")
    assert out["first"] == [1, 0]
    assert out["use"] == {"fw_core": "loaded", "fw_toy": "blocked", "fw_cube": "blocked",
                          "fw_tools": "blocked", "fw_cpu": "loaded"}
    assert out["use_returns_info"] is True
    assert out["after_use"] == [1, 1]  # unconfigured once, not configured again
    assert out["inspectors"] == [] and out["rules"] == ["cpu.blas_epilogue",
                                                        "cpu.numba_pointwise"]  # fw_cpu's only
    assert out["x_still_works"] == [2.0, 4.0]
    assert out["toy"] == "no device type 'toy' is available"
    assert out["restored"] == {"fw_core": "loaded", "fw_toy": "loaded", "fw_cube": "blocked",
                               "fw_tools": "loaded", "fw_cpu": "loaded"}
    assert out["after_restore"] == [2, 1]
    assert out["toy_back"] == [2.0, 3.0]
