"""Broken plugins each fail alone, with a reason naming what is wrong and a fix; the rest of
fw keeps working. All cases share one environment (the ``zoo``), loaded once."""

import pytest


@pytest.fixture(scope="module")
def loaded(zoo):
    return zoo.python("""
        import dataclasses
        out["plugins"] = {i.name: dataclasses.asdict(i) for i in fw.plugins.info()}
        x = fw.tensor([1.0, 2.0])
        out["add"], out["exp"] = (x + x).tolist(), fw.exp(x * 0.0).tolist()
        out["toy"] = (x.to("toy") * x.to("toy")).tolist()
        out["ops"] = sorted(fw.OPS)
        out["inspectors"] = fw.inspect.registered()
        out["devices"] = sorted(fw.available_devices())
        out["add_cpu"] = next(r for r in fw.plugins.dispatch_table()
                              if (r["op"], r["device"]) == ("add", "cpu"))
        import fw_dupadd
        out["dupadd_configured"] = len(fw_dupadd.CONFIGURED)
        try:
            fw.plugins.require("fw_broken")
        except errors.PluginError as e:
            out["require"] = str(e)
    """)


def plugin(loaded, name):
    return loaded["plugins"][name]


def test_the_rest_keeps_working(loaded):
    expected = {
        "fw_core": "loaded", "fw_toy": "loaded", "fw_fastadd": "loaded", "fw_dupadd": "failed",
        "fw_broken": "failed", "fw_badsig": "failed", "fw_typo": "failed",
        "fw_raising": "failed", "fw_wrongrecord": "failed", "fw_badconfig": "failed",
        "fw_toyfork": "failed", "fw_addop": "failed", "fw_cube": "failed",
        "fw_toy_legacy": "failed", "fw_cpu": "loaded"}
    assert {name: plugin(loaded, name)["state"] for name in expected} == expected
    assert loaded["add"] == [2.0, 4.0] and loaded["exp"] == [1.0, 1.0]
    assert loaded["toy"] == [1.0, 4.0]
    assert {"cpu", "toy"} <= set(loaded["devices"])
    for name in expected:
        p = plugin(loaded, name)
        if p["state"] == "failed":
            assert p["reason"] and p["fix"], name


def test_equal_priority_kernels_fail_the_later_plugin_naming_both(loaded):
    p = plugin(loaded, "fw_dupadd")
    assert p["reason"] == ("kernel for add on cpu conflicts with plugin fw_fastadd: both have "
                           "priority 10")
    assert "priority=" in p["fix"] and "FW_DISABLE_PLUGINS=fw_dupadd" in p["fix"]
    assert p["provides"] == {}
    assert loaded["add_cpu"]["plugin"] == "fw_fastadd"
    assert loaded["dupadd_configured"] == 0  # a failed plugin is not configured


def test_import_error_is_reported_with_the_exception(loaded):
    p = plugin(loaded, "fw_broken")
    assert p["reason"] == ("import error: ModuleNotFoundError: No module named "
                           "'fw_missing_dependency'")
    assert p["fix"] == ("reinstall it (pip install --force-reinstall fw-broken) or block it with "
                        "FW_DISABLE_PLUGINS=fw_broken")
    assert loaded["require"].splitlines() == [
        f"plugin fw_broken is failed: {p['reason']}", f"  fix:       {p['fix']}"]


def test_hook_argument_missing_from_the_spec_fails(loaded):
    p = plugin(loaded, "fw_badsig")
    assert p["reason"].startswith("bad hook implementation: ")
    assert "fw_register_kernels(device)" in p["reason"] and "'device'" in p["reason"]
    assert "fw_core/hookspecs.py" in p["fix"]


def test_unknown_hook_name_fails(loaded):
    p = plugin(loaded, "fw_typo")
    assert p["reason"] == "implements unknown hook(s) fw_register_kernel"
    assert "spelling" in p["fix"]


def test_incompatible_fw_core_requirement_fails_before_import(loaded):
    p = plugin(loaded, "fw_cube")
    assert p["reason"] == ("incompatible version: needs fw-core>=9, but fw-core 0.1.0 is "
                           "installed")
    assert p["fix"].startswith("pip install -U fw-cube fw-core")
    assert "cube" not in loaded["ops"]
    assert plugin(loaded, "fw_toy")["notes"] == ["kernel cube@toy ignored: no op 'cube' is loaded"]


def test_raising_hook_fails_and_keeps_none_of_its_records(loaded):
    p = plugin(loaded, "fw_raising")
    assert p["reason"] == "RuntimeError in its hooks: the kernel library failed to initialise"
    assert "half_done" not in loaded["ops"]  # its fw_register_ops had succeeded


def test_wrong_record_type_fails(loaded):
    p = plugin(loaded, "fw_wrongrecord")
    assert p["reason"] == ("TypeError in its hooks: fw_register_devices returned KernelSpec, "
                           "expected DeviceSpec records")


def test_raising_configure_fails_that_plugin(loaded):
    p = plugin(loaded, "fw_badconfig")
    assert p["reason"] == "RuntimeError in fw_configure: license server unreachable"
    assert "FW_DISABLE_PLUGINS=fw_badconfig" in p["fix"]
    assert p["provides"] == {} and "fw_badconfig.watch" not in loaded["inspectors"]


def test_same_module_under_two_plugin_names_fails_the_second(loaded):
    p = plugin(loaded, "fw_toy_legacy")
    assert p["reason"] == "its module fw_toy is already loaded as plugin fw_toy"
    assert "(fw-toy-legacy, fw-toy)" in p["fix"]


def test_device_and_op_names_of_another_plugin_fail_the_later_plugin(loaded):
    p = plugin(loaded, "fw_toyfork")
    assert p["reason"] == "device 'toy' is already registered by plugin fw_toy"
    assert p["fix"] == "rename it, or block one of the two with FW_DISABLE_PLUGINS"
    p = plugin(loaded, "fw_addop")
    assert p["reason"] == "op 'add' is already registered by plugin fw_core"
