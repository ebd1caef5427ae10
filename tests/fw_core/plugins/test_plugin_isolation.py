"""Plugins that crash the interpreter: ``import fw_core`` dies with a traceback naming the
plugin's file, and ``fw plugins --isolate`` loads each plugin in a child process of its own and
names the one that crashed, with the fix. Real plugins that segfault and ``os._exit``; the
verdict on a child's exit and the command-line detection are also checked on their own."""

import json
import re
import signal

import importlib_metadata
import pytest
from plugin_table import parse

from fw_core import cli, plugin_isolation, plugins
from fw_core.plugins import PluginInfo

#: plugins of the environment the checks do not need (each child costs an interpreter start)
OTHERS = "fw_cuda,fw_debugger,fw_mpi,fw_onednn,fw_viz"
FIX = ("block it with FW_DISABLE_PLUGINS={} (while it is installed and selected, every "
       "`import fw_core` dies), then reinstall it or report it to its authors")


def test_isolate_names_the_plugins_that_crash_the_interpreter(site):
    site.install("fw_segv").install("fw_osexit").install("fw_toy")
    plain = site.fw("plugins", FW_DISABLE_PLUGINS=f"{OTHERS},fw_osexit")
    assert plain.returncode == -signal.SIGSEGV  # the command dies with the interpreter...
    assert re.search(r'File ".*fw_segv\.py", line 5 in <module>', plain.stderr)  # ...not mutely

    done = site.fw("plugins", "--isolate", FW_DISABLE_PLUGINS=OTHERS)
    assert done.returncode == 0, done.stderr
    rows = parse(done.stdout)
    installed = {ep.name for ep in importlib_metadata.entry_points(group="fw.plugins")}
    assert {name: row[1] for name, row in rows.items()} == {
        "fw_core": "loaded", "fw_cpu": "loaded", "fw_osexit": "failed", "fw_segv": "failed",
        "fw_toy": "loaded", **{name: "blocked" for name in OTHERS.split(",") if name in installed}}
    under = {name: " ".join(row[4]) for name, row in rows.items()}
    assert under["fw_segv"].startswith(
        "reason: the interpreter died while loading it, in a child process of its own: killed "
        "by SIGSEGV (Segmentation fault) fix:    " + FIX.format("fw_segv"))
    assert re.search(r"note: +it crashed in \S+fw_segv\.py, line 5$", under["fw_segv"])
    assert under["fw_osexit"] == (
        "reason: the interpreter died while loading it, in a child process of its own: exit "
        "status 7 (os._exit, or a native library ending the process) fix:    "
        + FIX.format("fw_osexit"))
    # the rows of plugins that load are what their child saw, import time included
    version, state, seconds, provides, lines = rows["fw_toy"]
    assert provides == "devices: toy; kernels: add@toy, mul@toy, cube@toy"
    assert lines == ["note:   kernel cube@toy ignored: no op 'cube' is loaded"]
    assert re.fullmatch(r"\d+ ms|\d+\.\d s", seconds) and rows["fw_segv"][2] == "-"
    assert done.stdout.splitlines()[-2:] == [
        "(each plugin loaded in a child process of its own, with fw_core and fw_cpu;",
        " its row is what that child saw)"]


def test_isolate_json_says_so_and_has_no_dispatch_table(capsys, monkeypatch):
    row = PluginInfo("fw_x", "1.0", "fw-x", "failed", reason="the interpreter died", fix="-")
    monkeypatch.setattr(plugins, "isolated_info", lambda: [row])
    assert cli.main(["plugins", "--isolate", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["isolated"] is True and "dispatch" not in data
    assert [(p["name"], p["state"]) for p in data["plugins"]] == [("fw_x", "failed")]


def test_isolate_is_not_abbreviated(capsys):
    # the process recognises `--isolate` before argparse runs, so only the full spelling works
    assert cli.main(["plugins", "--iso"]) == 2
    assert "unrecognized arguments: --iso" in capsys.readouterr().err


@pytest.mark.parametrize("argv, orig_argv, isolating", [
    (["/venv/bin/fw", "plugins", "--isolate"], ["python", "/venv/bin/fw", "plugins", "--isolate"],
     True),
    (["-m", "plugins", "--json", "--isolate"],
     ["python", "-X", "importtime", "-m", "fw_core.cli", "plugins", "--json", "--isolate"], True),
    (["/venv/bin/fw", "plugins"], ["python", "/venv/bin/fw", "plugins"], False),
    (["/venv/bin/fw", "ops", "--isolate"], ["python", "/venv/bin/fw", "ops", "--isolate"], False),
    (["-m", "plugins", "--isolate"], ["python", "-m", "pytest", "plugins", "--isolate"], False),
    (["train.py", "plugins", "--isolate"], ["python", "train.py", "plugins", "--isolate"], False),
    (["-c"], ["python", "-c", "import fw_core"], False),
])
def test_the_isolating_command_is_recognised_from_its_command_line(argv, orig_argv, isolating):
    assert plugin_isolation.isolating_command(argv, orig_argv) is isolating


def row(name="fw_x"):
    return PluginInfo(name, "1.0", name.replace("_", "-"), "loaded")


def reported(**fields):
    return plugin_isolation._MARK + json.dumps(fields)


def test_verdict_on_a_child_that_reported_and_exited_cleanly():
    got = plugin_isolation.verdict(row(), 0, "junk a plugin printed\n" + reported(
        state="loaded", import_seconds=0.25, notes=["a note"]), "")
    assert (got.state, got.import_seconds, got.notes, got.reason) == (
        "loaded", 0.25, ["a note"], None)


def test_verdict_on_a_child_that_aborted_while_loading():
    got = plugin_isolation.verdict(row(), -signal.SIGABRT, "", "free(): invalid pointer\n")
    assert got.state == "failed" and got.provides == {}
    assert got.reason == ("the interpreter died while loading it, in a child process of its "
                          "own: killed by SIGABRT (Aborted)")
    assert got.fix == FIX.format("fw_x")
    assert got.notes == ["its last words on stderr: free(): invalid pointer"]


def test_verdict_on_a_child_that_crashed_at_exit_after_reporting():
    got = plugin_isolation.verdict(row(), -signal.SIGSEGV, reported(import_seconds=0.5), "")
    assert got.state == "failed" and got.import_seconds == 0.5 and got.notes == []
    assert got.reason.startswith("the interpreter died after loading it (at exit), in a child "
                                 "process of its own: killed by SIGSEGV")


def test_a_child_that_does_not_finish_in_time_is_failed():
    got = plugin_isolation._in_child(row("fw_cpu"), ["fw_cpu"], timeout=0.01)
    assert (got.state, got.reason) == (
        "failed", "did not finish loading in 0.01 s, in a child process of its own (its import "
        "or a hook hangs)")
    assert got.fix == FIX.format("fw_cpu")

