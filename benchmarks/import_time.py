"""Startup cost of ``import fw_core``: wall time and peak RSS, medians over fresh processes.

    python benchmarks/import_time.py [--runs 10] [--module fw_core] [--json PATH]

Each run is a new interpreter that times the import itself (``perf_counter`` around it, so the
interpreter's own start is left out) and reports its ``ru_maxrss``; a module already imported by
an earlier run cannot help a later one. A run of ``import numpy`` follows each, the floor fw
stands on: on a shared machine compare the two, not figures of different runs.
``python -X importtime -c "import fw_core"`` says where the time goes.

Python reads cached bytecode as an installed package has it; with ``PYTHONDONTWRITEBYTECODE``
set and no cache every module is compiled on each import, which roughly doubles fw's figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

PROBE = """
import resource, sys, time
start = time.perf_counter()
import {module}
seconds = time.perf_counter() - start
print(seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, len(sys.modules))
"""


def one_run(module: str) -> tuple[float, float, int]:
    """Seconds, peak RSS in MiB (Linux reports KiB) and modules loaded, for one fresh import."""
    out = subprocess.run([sys.executable, "-c", PROBE.format(module=module)],
                         capture_output=True, text=True, check=True).stdout
    seconds, rss, modules = out.split()
    return float(seconds), float(rss), int(modules)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--module", default="fw_core")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    result = {}
    for _ in range(args.runs):
        for module in (args.module, "numpy"):
            result.setdefault(module, []).append(one_run(module))
    for module, runs in result.items():
        result[module] = {
            "runs": len(runs),
            "median_s": statistics.median(r[0] for r in runs),
            "median_rss_mib": statistics.median(r[1] for r in runs),
            "modules_loaded": statistics.median(r[2] for r in runs),
        }
        row = result[module]
        print(f"import {module}: median {row['median_s']:.3f} s, "
              f"{row['median_rss_mib']:.1f} MiB max RSS, "
              f"{row['modules_loaded']:.0f} modules (over {args.runs} fresh processes)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
