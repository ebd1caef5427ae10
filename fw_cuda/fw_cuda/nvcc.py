"""Offline compilation of CUDA C with the machine's ``nvcc``, and ptxas's resource report.

CuPy's own compiler path (NVRTC) asks for a device before it compiles, so without a GPU only
``nvcc`` can prove that generated source compiles. :func:`compile_cubin` runs
``nvcc -arch=sm_90 -cubin -Xptxas -v`` in a temporary folder and parses, per kernel, the
registers, spill stores/loads and stack frame ptxas reports: the figures that say whether a
fused kernel will run at full occupancy on the target (an H100/H200 is sm_90).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

from fw_core.errors import FwError

ARCH = "sm_90"

_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(\w+)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")


def nvcc_path() -> str | None:
    """Where ``nvcc`` is ($FW_NVCC, else the PATH), or None when it is not installed."""
    return os.environ.get("FW_NVCC") or shutil.which("nvcc")


def compile_cubin(source: str, arch: str = ARCH, timeout: float = 120.0) -> dict[str, dict]:
    """Compile ``source`` to a cubin for ``arch``; return ``{kernel: resources}``.

    ``resources`` has ``registers``, ``spill_stores`` and ``spill_loads`` (bytes) and
    ``stack_frame`` (bytes). Raises FwError when nvcc is missing or the source does not compile
    (the message carries nvcc's diagnostics).
    """
    nvcc = nvcc_path()
    if nvcc is None:
        raise FwError("nvcc is not installed", hint="install the CUDA toolkit or set FW_NVCC")
    with tempfile.TemporaryDirectory(prefix="fw_nvcc_") as folder:
        path = os.path.join(folder, "kernel.cu")
        with open(path, "w") as handle:
            handle.write(source)
        command = [nvcc, f"-arch={arch}", "-cubin", "-Xptxas", "-v", "-o",
                   os.path.join(folder, "kernel.cubin"), path]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    report = done.stdout + done.stderr
    if done.returncode != 0:
        raise FwError(f"nvcc failed (exit {done.returncode}):\n{report.strip()}",
                      hint="the generated source is printed by fw_cuda.fusion.source(group)")
    return parse_ptxas(report)


def parse_ptxas(report: str) -> dict[str, dict]:
    """Per kernel, the figures of a ``ptxas -v`` report (see :func:`compile_cubin`)."""
    found: dict[str, dict] = {}
    current = None
    for line in report.splitlines():
        entry = _ENTRY.search(line)
        if entry:
            current = found.setdefault(entry.group(1), {"arch": entry.group(2)})
            continue
        if current is None:
            continue
        frame = _FRAME.search(line)
        if frame:
            current.update(stack_frame=int(frame.group(1)), spill_stores=int(frame.group(2)),
                           spill_loads=int(frame.group(3)))
        used = _USED.search(line)
        if used:
            current["registers"] = int(used.group(1))
    return found
