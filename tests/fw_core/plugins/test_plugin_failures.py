"""Broken plugins each fail alone, with a reason naming what is wrong and a fix; the rest of
fw keeps working. All cases share one environment (the ``zoo``), loaded once (``loaded``)."""

import pytest

import fw_core as fw
from fw_core import hookimpl


def plugin(loaded, name):
    return loaded["plugins"][name]


def test_the_rest_keeps_working(loaded):
    expected = {
        "fw_core": "loaded", "fw_toy": "loaded", "fw_fastadd": "loaded", "fw_dupadd": "loaded",
        "fw_broken": "failed", "fw_badsig": "failed", "fw_typo": "failed",
        "fw_raising": "failed", "fw_wrongrecord": "failed", "fw_badconfig": "failed",
        "fw_toyfork": "loaded", "fw_addop": "loaded", "fw_cube": "failed",
        "fw_toy_legacy": "failed", "fw_cpu": "loaded", "fw_betterrelu": "loaded",
        "fw_altcpu": "loaded", "fw_sysexit": "failed", "fw_genexit": "failed",
        "fw_baseexc": "failed", "fw_exithook": "failed"}
    assert {name: plugin(loaded, name)["state"] for name in expected} == expected
    assert loaded["add"] == [2.0, 4.0] and loaded["exp"] == [1.0, 1.0]
    assert loaded["toy"] == [1.0, 4.0]
    assert {"cpu", "toy", "alt"} <= set(loaded["devices"])
    for name in expected:
        p = plugin(loaded, name)
        if p["state"] == "failed":
            assert p["reason"] and p["fix"], name


@pytest.mark.parametrize("name, reason", [
    ("fw_sysexit", "import error: SystemExit: it called sys.exit(3)"),
    ("fw_genexit", "import error: GeneratorExit: closed while importing"),
    ("fw_baseexc", "import error: LicenseAbort: no seat left on the license server"),
])
def test_base_exception_at_import_fails_that_plugin_like_an_import_error(loaded, name, reason):
    p = plugin(loaded, name)
    assert (p["state"], p["reason"]) == ("failed", reason)
    assert p["fix"] == (f"reinstall it (pip install --force-reinstall {name.replace('_', '-')}) "
                        f"or block it with FW_DISABLE_PLUGINS={name}")
    assert p["provides"] == {} and p["import_seconds"] >= 0


def test_sys_exit_in_a_hook_fails_that_plugin(loaded):
    p = plugin(loaded, "fw_exithook")
    assert p["reason"] == "SystemExit in its hooks: no GPU found, giving up"
    assert p["fix"].endswith("FW_DISABLE_PLUGINS=fw_exithook")


def test_import_time_is_measured_for_every_imported_plugin(loaded):
    seconds = {name: p["import_seconds"] for name, p in loaded["plugins"].items()}
    assert seconds["fw_core"] is None  # nothing of it is imported as a plugin
    assert seconds["fw_cube"] is None  # refused before its import (incompatible fw-core)
    for name in ("fw_toy", "fw_cpu", "fw_broken", "fw_sysexit", "fw_typo"):
        assert isinstance(seconds[name], float) and 0 <= seconds[name] < 60, name
    assert not any(n.startswith("slow import") for n in plugin(loaded, "fw_toy")["notes"])


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


class _CtrlC:
    """A plugin whose hook is interrupted by the user (Ctrl-C)."""

    @hookimpl
    def fw_register_kernels(self):
        raise KeyboardInterrupt


def test_keyboard_interrupt_in_a_plugin_is_not_swallowed():
    try:
        with pytest.raises(KeyboardInterrupt):
            fw.plugins.register(_CtrlC(), "ctrl_c_plugin")
    finally:
        fw.plugins.unregister("ctrl_c_plugin")
    assert "ctrl_c_plugin" not in {i.name for i in fw.plugins.info()}
    assert fw.relu(fw.tensor([-1.0, 3.0])).tolist() == [0.0, 3.0]
