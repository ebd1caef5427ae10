"""The ``fw`` command: which plugins are installed and loaded, and what every op promises.

    fw plugins [--json] [--verbose] [--isolate]
                                      every plugin: version, state, import time, what it
                                      provides, and for one that is not loaded, why and how to
                                      fix it; --isolate loads each in a child process of its
                                      own, to name one that crashes the interpreter
    fw ops [--family F] [--json]      op contracts: name, family, structure, anchor, signature
    fw describe OP                    one op's full contract and which plugin runs it where
    fw run -n N [--threads T] SCRIPT [ARGS...]
                                      run a Python script on N processes through the installed
                                      distributed backend's launcher (fw-mpi: mpiexec), with
                                      T threads per process (default: cores // N, at least 1)
    fw --version

``python -m fw_core.cli`` is the same command. :func:`main` returns the exit status: 0 on
success, 1 when something asked about is missing, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import os
import platform
import sys
import textwrap
from typing import TextIO

import numpy as np

from . import __version__, plugin_isolation, plugins
from .ops import registry

_WIDTH = 100
_INDENT = "    "


def main(argv: list[str] | None = None) -> int:
    """Run ``fw`` with ``argv`` (default: the process arguments); return the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors: argparse has printed them
        return exc.code if isinstance(exc.code, int) else 0
    if args.command is None:
        parser.print_usage(sys.stderr)
        print("fw: error: name a command (plugins, ops, describe); `fw --help` lists them",
              file=sys.stderr)
        return 2
    try:
        code = args.run(args, sys.stdout)
        sys.stdout.flush()
        return code
    except BrokenPipeError:  # `fw ops | head`: the reader left; say nothing more at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fw", description="Inspect fw's plugins and op contracts.")
    parser.add_argument("--version", action="version", version=_version_line())
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    # no abbreviations: `fw plugins --isolate` is recognised before argparse runs
    # (fw_core.plugin_isolation.isolating_command), by its full spelling
    p = commands.add_parser("plugins", allow_abbrev=False,
                            help="list installed plugins, their state and what they provide",
                            description="List every installed plugin: version, "
                            "state (loaded / blocked / failed / no device), what it provides, "
                            "and why a plugin is not loaded, with the fix.")
    p.add_argument("--json", action="store_true",
                   help="print JSON (every field, and the dispatch table) instead of a table")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also list every kernel, device, op and rule of each plugin")
    p.add_argument("--isolate", action="store_true",
                   help="load each plugin in a child process of its own, so one that crashes "
                   "the interpreter (a segfault at import) is named instead of ending `fw`")
    p.set_defaults(run=_plugins)

    p = commands.add_parser("ops", help="list op contracts",
                            description="List op contracts: name, family, Jacobian structure, "
                            "explanation anchor and signature.")
    p.add_argument("--family", metavar="F", help="only ops of this family (e.g. elementwise)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(run=_ops)

    p = commands.add_parser("describe", help="print one op's full contract",
                            description="Print one op's contract: maths, signature, structure, "
                            "anchor, gradient, and the kernel (and its plugin) on each device.")
    p.add_argument("op", help="the op's name, e.g. relu")
    p.set_defaults(run=_describe)

    p = commands.add_parser("run", help="run a script on N processes (needs fw-mpi)",
                            description="Start SCRIPT on N processes with the distributed "
                            "backend's launcher (mpiexec), each with T compute threads.")
    p.add_argument("-n", "--ranks", type=int, required=True, help="how many processes")
    p.add_argument("--threads", type=int, default=None,
                   help="threads per process (default: cores // N, at least 1)")
    p.add_argument("script", help="the Python script")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    p.set_defaults(run=_launch)
    return parser


def _version_line() -> str:
    return (f"fw-core {__version__} (Python {platform.python_version()}, "
            f"NumPy {np.__version__})")


def _error(message: str) -> None:
    print(f"fw: error: {message}", file=sys.stderr)


# -- fw run -----------------------------------------------------------------------------------
#: the thread-count variables of the libraries fw computes with (OpenMP, OpenBLAS, MKL, Numba)
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMBA_NUM_THREADS")


def _launch(args, out: TextIO) -> int:
    import subprocess

    from . import distributed
    from .errors import FwError

    if args.ranks < 1 or (args.threads is not None and args.threads < 1):
        _error("-n and --threads take a positive number")
        return 2
    try:
        backend = distributed.backend("fw run")
        command = distributed.resolve(backend.launcher)(
            args.ranks, [sys.executable, args.script, *args.args])
    except FwError as exc:
        _error(str(exc))
        return 1
    threads = args.threads or max(1, (os.cpu_count() or 1) // args.ranks)
    env = {**os.environ, **dict.fromkeys(THREAD_VARIABLES, str(threads))}
    return subprocess.call(command, env=env)


# -- fw plugins -------------------------------------------------------------------------------
def _plugins(args, out: TextIO) -> int:
    if not args.isolate:
        _make_devices()
    infos = plugins.isolated_info() if args.isolate else plugins.info()
    for i in infos:
        if i.import_seconds is not None and i.import_seconds > plugins.SLOW_IMPORT_SECONDS:
            print(f"fw: warning: plugin {i.name} took {i.import_seconds:.1f} s to import, and "
                  "every `import fw_core` waits for it (`fw plugins` says what to do)",
                  file=sys.stderr)
    if args.json:
        payload = {"fw_core": __version__, "isolated": args.isolate,
                   "plugins": [dataclasses.asdict(i) for i in infos]}
        if not args.isolate:  # this process loaded no plugin: it has no dispatch table to show
            payload["dispatch"] = plugins.dispatch_table()
        json.dump(payload, out, indent=2)
        out.write("\n")
        return 0
    rows = [(i.name, i.version, i.state, _seconds(i.import_seconds), i.summary() or "-")
            for i in infos]
    _table(out, ("PLUGIN", "VERSION", "STATE", "IMPORT", "PROVIDES"), rows, after=[
        _plugin_details(i, args.verbose) for i in infos])
    if args.isolate:
        out.write(f"(each plugin loaded in a child process of its own, with fw_core and "
                  f"{plugin_isolation.BASELINE};\n its row is what that child saw)\n")
    return 0


def _make_devices() -> None:
    """Make one device of every usable type, so plugins whose kernels load with the first
    device (fw_onednn's library) report what they loaded: its version and ISA."""
    from .device import available, get

    for kind in available():
        get(kind)


def _seconds(seconds: float | None) -> str:
    """An import time for the table: "-" when the plugin was not imported."""
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def _plugin_details(info: plugins.PluginInfo, verbose: bool) -> list[str]:
    """The lines under a plugin's row: reason and fix, notes, and in verbose mode everything
    it provides."""
    lines = []
    if info.reason:
        lines += _wrapped("reason: ", info.reason)
    if info.fix:
        lines += _wrapped("fix:    ", info.fix)
    for note in info.notes:
        lines += _wrapped("note:   ", note)
    if verbose:
        lines += _provided(info)
    return lines


def _provided(info: plugins.PluginInfo) -> list[str]:
    """Everything a plugin provides; for kernels, per device, and which of them lost to
    another plugin's kernel."""
    lines = []
    owners = {(r["op"], r["device"]): r for r in plugins.dispatch_table()}
    for key, items in info.provides.items():
        if not items:
            continue
        label = key.replace("_", " ")
        if key != "kernels":
            lines += _wrapped(f"{label} ({len(items)}): ", ", ".join(items))
            continue
        by_device: dict[str, list[str]] = {}
        for item in items:
            op, _, device = item.partition("@")
            by_device.setdefault(device, []).append(op)
        for device, ops in by_device.items():
            lines += _wrapped(f"kernels on {device} ({len(ops)}): ", ", ".join(sorted(ops)))
            for op in sorted(ops):
                row = owners.get((op, device))
                if row is not None and row["plugin"] != info.name:
                    lines += _wrapped(f"  {op}@{device} runs {row['plugin']}'s kernel: ",
                                      row["why"])
    return lines


def _wrapped(label: str, text: str) -> list[str]:
    return textwrap.wrap(text, _WIDTH, initial_indent=_INDENT + label,
                         subsequent_indent=_INDENT + " " * len(label),
                         break_on_hyphens=False, break_long_words=False  # paths stay whole
                         ) or [_INDENT + label.rstrip()]


def _table(out: TextIO, header: tuple[str, ...], rows: list[tuple], after=None) -> None:
    """Columns padded to their widest cell; the last column wraps under itself past the line
    width. ``after[i]`` are lines printed under row ``i``."""
    widths = [max(len(str(r[c])) for r in (header, *rows)) for c in range(len(header) - 1)]
    start = sum(widths) + 2 * len(widths)

    def line(cells):
        padded = "  ".join(str(c).ljust(w) for c, w in zip(cells, widths))
        last = textwrap.wrap(str(cells[-1]), max(_WIDTH - start, 30),
                             break_on_hyphens=False) or [""]
        return "\n".join([f"{padded}  {last[0]}".rstrip(),
                          *(" " * start + more for more in last[1:])])

    out.write(line(header) + "\n")
    for n, row in enumerate(rows):
        out.write(line(row) + "\n")
        for extra in (after[n] if after else ()):
            out.write(extra + "\n")


# -- fw ops / fw describe ---------------------------------------------------------------------
def _ops(args, out: TextIO) -> int:
    ops = sorted(registry.OPS.values(), key=lambda o: (o.family, o.name))
    if args.family is not None:
        families = sorted({o.family for o in ops})
        if args.family not in families:
            _error(f"no op family {args.family!r}; families: {', '.join(families)}")
            return 2
        ops = [o for o in ops if o.family == args.family]
    if args.json:
        json.dump([_contract(o) for o in ops], out, indent=2)
        out.write("\n")
        return 0
    rows = [(o.name, o.family, o.structure.value, o.anchor.kind, o.signature) for o in ops]
    _table(out, ("OP", "FAMILY", "STRUCTURE", "ANCHOR", "SIGNATURE"), rows)
    return 0


def _contract(op) -> dict:
    """An op contract as plain data (what ``fw ops --json`` prints)."""
    return {"name": op.name, "family": op.family, "doc": op.doc, "signature": op.signature,
            "structure": op.structure.value,
            "anchor": {"kind": op.anchor.kind, "says": op.anchor.says},
            "differentiable": op.vjp is not None,
            "twice_differentiable": op.twice_differentiable,
            "saves": sorted(op.saves), "float_result": op.float_result,
            "devices": registry.devices_with_kernel(op)}


def _describe(args, out: TextIO) -> int:
    op = registry.OPS.get(args.op)
    if op is None:
        close = difflib.get_close_matches(args.op, registry.OPS, n=3)
        hint = f"did you mean {', '.join(close)}?" if close else "`fw ops` lists every op"
        _error(f"no op named {args.op!r}; {hint}")
        return 1
    gradient = "none (not differentiable)"
    if op.vjp is not None:
        gradient = "VJP in fw ops" + (" (twice differentiable)" if op.twice_differentiable
                                      else " (not twice differentiable)")
    fields = [
        ("signature", op.signature),
        ("family", op.family),
        ("structure", op.structure.value),
        ("anchor", f"{op.anchor.kind}: {op.anchor.says}"),
        ("gradient", gradient),
        ("saves", ", ".join(sorted(op.saves)) or "nothing"),
        ("float result", "yes: integer and bool inputs compute in the default float dtype"
         if op.float_result else "no"),
    ]
    rows = [r for r in plugins.dispatch_table() if r["op"] == op.name]
    kernels = [f"{r['device']}: {r['plugin']} ({r['why']})" for r in rows]
    fields.append(("kernels", "; ".join(kernels) or "none loaded"))
    out.write(f"{op.name}: {op.doc}\n")
    width = max(len(name) for name, _ in fields) + 2
    for name, text in fields:
        label = f"{name}:".ljust(width)
        out.write("\n".join(textwrap.wrap(text, _WIDTH, initial_indent="  " + label,
                                          subsequent_indent="  " + " " * width,
                                          break_on_hyphens=False)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
