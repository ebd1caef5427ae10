"""The ``fw`` command: ``fw plugins`` (table, --json, --verbose), ``fw ops``, ``fw describe``,
``fw --version`` and its usage errors. The installed set is checked in-process through
``main(argv)``; the states of broken plugins in a fresh interpreter against the ``zoo``."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from plugin_table import parse, table

import fw_core as fw
from fw_core.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- fw plugins, installed set ------------------------------------------------------------------
def test_plugins_table_lists_every_installed_plugin(capsys):
    code, out, err = run(capsys, "plugins")
    assert code == 0 and err == ""
    assert out.splitlines()[0].split() == ["PLUGIN", "VERSION", "STATE", "IMPORT", "PROVIDES"]
    rows = parse(out)
    assert rows["fw_core"] == (fw.__version__, "loaded", "-", f"ops: {len(fw.OPS)}", [])
    assert rows["fw_cpu"][1] == "loaded"
    assert re.fullmatch(r"\d+ ms|\d+\.\d s", rows["fw_cpu"][2])
    assert rows["fw_cpu"][3].startswith("devices: cpu; kernels: ")


def test_plugins_json_has_every_field(capsys):
    code, out, _ = run(capsys, "plugins", "--json")
    data = json.loads(out)
    assert code == 0 and data["fw_core"] == fw.__version__
    cpu = next(p for p in data["plugins"] if p["name"] == "fw_cpu")
    assert set(cpu) == {"name", "version", "distribution", "state", "reason", "fix", "provides",
                        "notes", "import_seconds"}
    assert cpu["import_seconds"] > 0 and data["isolated"] is False
    assert cpu["distribution"] == "fw-cpu" and cpu["state"] == "loaded"
    assert "relu@cpu" in cpu["provides"]["kernels"]
    assert {"op": "abs", "device": "cpu", "plugin": "fw_cpu",
            "why": "only kernel registered"} in data["dispatch"]


def test_plugins_verbose_lists_kernels_per_device(capsys):
    code, out, _ = run(capsys, "plugins", "--verbose")
    assert code == 0
    lines = out.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("    kernels on cpu ("))
    label, listed = lines[start].split(": ", 1)
    indent = " " * (len(label) + 2)  # where the wrapped list continues
    for more in lines[start + 1:]:
        if not more.startswith(indent) or more[len(indent)] == " ":
            break  # a label, a dispatch note or the next plugin's row
        listed += " " + more.strip()
    cpu = next(i for i in fw.plugins.info() if i.name == "fw_cpu")
    expected = sorted(k.split("@")[0] for k in cpu.provides["kernels"])
    assert listed.split(", ") == expected
    assert lines[start].startswith(f"    kernels on cpu ({len(expected)}): ")
    assert "    devices (1): cpu" in out


# -- fw ops / fw describe / --version -------------------------------------------------------------
def test_ops_lists_every_contract(capsys):
    code, out, _ = run(capsys, "ops")
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["OP", "FAMILY", "STRUCTURE", "ANCHOR", "SIGNATURE"]
    names = {line.split()[0] for line in lines[1:] if not line[0].isspace()}
    assert names == set(fw.OPS)
    relu = next(line for line in lines if line.startswith("relu "))
    assert relu.split()[1:4] == ["elementwise", "elementwise", "kink"]
    assert relu.endswith("relu(x: Tensor) -> Tensor")


def test_ops_family_filter_and_json(capsys):
    code, out, _ = run(capsys, "ops", "--family", "elementwise", "--json")
    data = json.loads(out)
    assert code == 0
    assert {d["name"] for d in data} == {n for n, o in fw.OPS.items() if o.family == "elementwise"}
    exp = next(d for d in data if d["name"] == "exp")
    assert exp["structure"] == "elementwise" and exp["anchor"]["kind"] == "smooth"
    assert exp["float_result"] is True and exp["saves"] == ["out"] and "cpu" in exp["devices"]


def test_describe_prints_the_full_contract(capsys):
    code, out, _ = run(capsys, "describe", "relu")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "relu: max(x, 0)."
    fields = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip()
              for line in lines[1:] if line.startswith("  ") and not line.startswith("   ")}
    assert fields["signature"] == "relu(x: Tensor) -> Tensor"
    assert fields["structure"] == "elementwise"
    assert fields["anchor"].startswith("kink: gradient is exactly 0 for x < 0")
    assert fields["gradient"] == "VJP in fw ops (twice differentiable)"
    # what the dispatch table says (fw_onednn, where installed, serves some relu calls); other
    # device plugins (fw_cuda) may list their kernels after the CPU's
    row = next(r for r in fw.plugins.dispatch_table() if (r["op"], r["device"]) == ("relu", "cpu"))
    assert fields["kernels"].startswith(f"cpu: {row['plugin']} (")
    assert f"kernels: cpu: {row['plugin']} ({row['why']})" in " ".join(out.split())  # unwrapped


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith(f"fw-core {fw.__version__} (Python ")


@pytest.mark.parametrize("argv, code, message", [
    ((), 2, "fw: error: name a command (plugins, ops, describe)"),
    (("plugin",), 2, "invalid choice: 'plugin'"),
    (("plugins", "--jsn"), 2, "unrecognized arguments: --jsn"),
    (("describe",), 2, "the following arguments are required: op"),
    (("describe", "relux"), 1, "fw: error: no op named 'relux'; did you mean relu"),
    (("describe", "zzz"), 1, "`fw ops` lists every op"),
    (("ops", "--family", "elementwize"), 2, "no op family 'elementwize'; families: "),
])
def test_usage_errors_say_what_is_wrong(capsys, argv, code, message):
    got, out, err = run(capsys, *argv)
    assert got == code and out == ""
    assert message in err


def test_console_script_is_installed():
    script = Path(sys.executable).with_name("fw")
    if not script.exists():
        pytest.skip("the fw console script is not installed in this environment")
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("fw-core ")


# -- fw plugins with broken plugins (fresh interpreter) -----------------------------------------
def test_plugins_table_explains_every_plugin_that_is_not_loaded(zoo):
    done = zoo.fw("plugins", FW_DISABLE_PLUGINS="fw_badconfig")
    assert done.returncode == 0, done.stderr
    rows = table(done.stdout)
    assert rows["fw_dupadd"] == ("0.1.0", "loaded", "kernels: add@cpu", [])
    assert rows["fw_fastadd"] == ("0.1.0", "loaded", "-", [
        "note:   kernel add@cpu refused: plugin fw_dupadd has one of the same priority 10, which "
        "runs", "(fw_dupadd loads first: fw_core, then plugins by name). Give yours priority=11 "
        "or more", "to replace it, or block one of the two with FW_DISABLE_PLUGINS=fw_fastadd"])
    assert rows["fw_broken"][3][0] == ("reason: import error: ModuleNotFoundError: No module "
                                       "named 'fw_missing_dependency'")
    assert rows["fw_toy"][3] == ["note:   kernel cube@toy ignored: no op 'cube' is loaded"]
    assert rows["fw_badconfig"][1:3] == ("blocked", "-")
    assert rows["fw_badconfig"][3] == [
        "reason: blocked by FW_DISABLE_PLUGINS",
        "fix:    remove fw_badconfig from FW_DISABLE_PLUGINS to load it"]
    for name, (_, state, _, lines) in rows.items():
        if state != "loaded":
            assert any(line.startswith("reason: ") for line in lines), name
            assert any(line.startswith("fix:    ") for line in lines), name


def test_plugins_json_and_verbose_for_broken_and_blocked_plugins(zoo):
    data = json.loads(zoo.fw("plugins", "--json", FW_DISABLE_PLUGINS="fw_broken").stdout)
    states = {p["name"]: p["state"] for p in data["plugins"]}
    assert states["fw_broken"] == "blocked" and states["fw_typo"] == "failed"
    assert states["fw_toy"] == "loaded"
    verbose = zoo.fw("plugins", "--verbose").stdout
    assert ("      add@cpu runs fw_dupadd's kernel: priority 10, tied with fw_fastadd (fw_dupadd "
            "loads first:\n") in verbose
    assert "      exp@cpu runs fw_betterrelu's kernel: priority 1 beats fw_cpu (priority 0)\n" \
        in verbose
    assert "    kernels on toy (3): add, cube, mul" in verbose


def test_no_device_state_and_custom_op_through_the_command(site):
    site.install("fw_toy2").install("fw_cube")
    rows = table(site.fw("plugins").stdout)
    assert rows["fw_toy2"] == ("0.1.0", "no device", "devices: toy2; kernels: add@toy2", [
        "reason: toy2: no toy2 card found (driver toy2drv is not loaded)",
        "fix:    install the device's driver/runtime, or keep using the other devices"])
    ops = site.fw("ops", "--family", "custom").stdout.splitlines()
    assert len(ops) == 2 and ops[1].split()[:4] == ["cube", "custom", "elementwise", "smooth"]
    described = site.fw("describe", "cube").stdout
    assert described.startswith("cube: x ** 3, elementwise.\n")
    assert "  kernels:      cpu: fw_cube (only kernel registered)" in described


def test_slow_import_is_shown_and_warned_about(site):
    site.install("fw_slow").install("fw_toy")  # fw_slow sleeps 1.05 s at import
    done = site.fw("plugins")
    assert done.returncode == 0
    rows = parse(done.stdout)
    version, state, seconds, provides, under = rows["fw_slow"]
    assert (state, provides) == ("loaded", "kernels: cube@cpu")
    assert re.fullmatch(r"1\.\d s", seconds)
    assert " ".join(under).startswith(f"note:   slow import: importing it took {seconds}, which "
                                      "every `import fw_core` waits for; block it where it is "
                                      "not used (FW_DISABLE_PLUGINS=fw_slow)")
    assert re.fullmatch(r"\d+ ms", rows["fw_toy"][2])
    assert f"fw: warning: plugin fw_slow took {seconds} to import" in done.stderr
    assert "fw_toy" not in done.stderr
