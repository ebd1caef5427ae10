"""Loading each plugin in a child process, so one that crashes the interpreter is named.

A plugin's import runs its code (and its native libraries') in the interpreter: a segfault,
``os._exit`` or ``abort()`` there ends the process before fw can say anything. ``fw plugins
--isolate`` (:func:`fw_core.plugins.isolated_info`) therefore loads every selected plugin in a
fresh child process of the same interpreter, with the same ``sys.path``, and reports what each
child saw; a child that dies or hangs names its plugin as failed, with the
``FW_DISABLE_PLUGINS`` fix.
The process of that command imports no plugin itself (:func:`isolating_command`).

Each child loads fw_core, the plugin and fw_cpu (the CPU device, which most plugins' kernels
target), so a plugin's conflicts with fw_cpu show as they would in a full load; fw_cpu's own
child runs first, and if fw_cpu itself crashes, the other children load without it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import plugins

BASELINE = "fw_cpu"

_MARK = "@@fw-plugin-row@@"
#: the child: argv[1] is the plugin whose row it reports (FW_PLUGINS selects what loads)
_CHILD = f"""\
import dataclasses, json, sys
import fw_core
row = next(i for i in fw_core.plugins.info() if i.name == sys.argv[1])
print({_MARK!r} + json.dumps(dataclasses.asdict(row), default=str), flush=True)
"""


def isolating_command(argv: list[str] | None = None, orig_argv: list[str] | None = None) -> bool:
    """Whether this process runs ``fw plugins --isolate`` (the ``fw`` script or ``python -m
    fw_core.cli``). Its plugins load at ``import fw_core``, before the command parses its
    arguments, so the command line is read here: that process must import no plugin."""
    argv = sys.argv if argv is None else argv
    orig_argv = getattr(sys, "orig_argv", []) if orig_argv is None else orig_argv
    if "-m" in orig_argv[:-1]:
        at = orig_argv.index("-m")
        if orig_argv[at + 1] != "fw_core.cli":
            return False
        rest = orig_argv[at + 2:]
    elif argv and Path(argv[0]).name in ("fw", "fw.exe", "fw-script.py"):
        rest = argv[1:]
    else:
        return False
    return rest[:1] == ["plugins"] and "--isolate" in rest[1:]


def load_each(rows: list[plugins.PluginInfo], timeout: float) -> list[plugins.PluginInfo]:
    """What a child process of its own saw of each of these plugins' rows, in their order."""
    seen: dict[str, plugins.PluginInfo] = {}
    partners = []
    if any(r.name == BASELINE for r in rows):
        baseline = seen[BASELINE] = _in_child(next(r for r in rows if r.name == BASELINE),
                                              [BASELINE], timeout)
        partners = [] if baseline.state == plugins.FAILED else [BASELINE]
    others = [r for r in rows if r.name not in seen]
    with ThreadPoolExecutor(max_workers=max(1, min(len(others), os.cpu_count() or 1))) as pool:
        for row in pool.map(lambda r: _in_child(r, [r.name, *partners], timeout), others):
            seen[row.name] = row
    return [seen[r.name] for r in rows]


def _in_child(row: plugins.PluginInfo, names: list[str], timeout: float) -> plugins.PluginInfo:
    """Load ``names`` in a fresh interpreter and return its view of ``row``'s plugin."""
    env = dict(os.environ, FW_PLUGINS=",".join(names),
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, row.name], env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return _failed(row, f"did not finish loading in {timeout:g} s, in a child process of "
                       "its own (its import or a hook hangs)", None)
    return verdict(row, done.returncode, done.stdout, done.stderr)


def verdict(row: plugins.PluginInfo, returncode: int, stdout: str, stderr: str
            ) -> plugins.PluginInfo:
    """A plugin's row from what its child process printed and how it ended."""
    reported = next((line[len(_MARK):] for line in reversed(stdout.splitlines())
                     if line.startswith(_MARK)), None)
    if reported is not None:
        row = dataclasses.replace(row, **json.loads(reported))
    if returncode == 0 and reported is not None:
        return row
    when = "while loading it" if reported is None else "after loading it (at exit)"
    return _failed(row, f"the interpreter died {when}, in a child process of its own: "
                   f"{_how(returncode)}", _where(stderr))


def _how(returncode: int) -> str:
    if returncode < 0:
        try:
            sig = signal.Signals(-returncode)
        except ValueError:
            return f"killed by signal {-returncode}"
        return f"killed by {sig.name} ({signal.strsignal(sig) or sig.name})"
    return f"exit status {returncode} (os._exit, or a native library ending the process)"


def _where(stderr: str) -> str | None:
    """Where it crashed: in faulthandler's traceback (innermost frame first), the innermost
    frame outside the standard library; else stderr's last line."""
    if "Fatal Python error" in stderr:
        stdlib = sysconfig.get_paths()["stdlib"]
        for path, line in re.findall(r'File "(.+)", line (\d+)', stderr):
            if not path.startswith((stdlib, "<")):
                return f"it crashed in {path}, line {line}"
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return f"its last words on stderr: {lines[-1]}" if lines else None


def _failed(row: plugins.PluginInfo, reason: str, where: str | None) -> plugins.PluginInfo:
    return dataclasses.replace(
        row, state=plugins.FAILED, reason=reason, provides={}, notes=[where] if where else [],
        fix=f"block it with FW_DISABLE_PLUGINS={row.name} (while it is installed and selected, "
            "every `import fw_core` dies), then reinstall it or report it to its authors")
