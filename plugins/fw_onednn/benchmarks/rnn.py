"""The nn.LSTM workload (``benchmarks/workloads/lstm.py``: LSTM 64->128 over 32 steps, a linear
head, cross-entropy, Adam) in fw eager and compiled, with and without fw_onednn, against PyTorch
eager.

    python plugins/fw_onednn/benchmarks/rnn.py [--rounds 7]

fw with fw_onednn and fw with it blocked (``FW_DISABLE_PLUGINS=fw_onednn``) each run in a fresh
process, since the plugin set is fixed at load. In each process fw eager, fw compiled and PyTorch
eager take turns round by round (a shared machine's load then falls on all three alike), and the
ratios are PyTorch's time over fw's, measured in that same process: above 1, fw is faster. It
times a training step on the batch of 32 and an inference call on a batch of 1, and prints one
table, the machine and the median seconds as JSON.

In the fw_cpu-only process NumPy's OpenBLAS keeps two threads that spin while idle (fw holds it
to one only while fw_onednn is loaded), and PyTorch's OpenMP threads taking turns with them run
slower than alone; so the table also gives every fw figure over the PyTorch time of the process
with fw_onednn, where PyTorch runs undisturbed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
MODES = ("fw_eager", "fw_compiled", "torch_eager")
CONFIGS = {"with fw_onednn": "", "fw_cpu only": "fw_onednn"}


def _child(rounds: int) -> dict:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from timing import in_turns, warm_sessions

    sessions = warm_sessions("lstm", MODES)
    train = in_turns({m: (s.train, ()) for m, s in sessions.items()}, rounds)
    infer = in_turns({m: (s.infer, (1,)) for m, s in sessions.items()}, rounds)
    import fw_core as fw

    loaded = [p.name for p in fw.plugins.info() if p.state == "loaded"]
    return {"train_s": train, "infer_s": infer, "plugins": loaded}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.rounds)))
        return
    results = {}
    for name, blocked in CONFIGS.items():
        env = {**os.environ, "FW_DISABLE_PLUGINS": blocked}
        done = subprocess.run([sys.executable, __file__, "--child", "--rounds",
                               str(args.rounds)], env=env, capture_output=True, text=True,
                              check=True)
        results[name] = json.loads(done.stdout.splitlines()[-1])
    print(f"nn.LSTM workload (T=32, B=32, 64->128), {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs; ratios are PyTorch eager's time / fw's (>1: fw faster)\n")
    calm = results["with fw_onednn"]  # where PyTorch's threads have the cores to themselves
    print("| fw | train step (ms) | x torch (same process) | x torch (with-fw_onednn process) "
          "| infer batch 1 (ms) | x torch (same process) | x torch (with-fw_onednn process) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, r in results.items():
        for mode in ("fw_eager", "fw_compiled"):
            cells = []
            for kind in ("train_s", "infer_s"):
                ours = r[kind][mode]
                cells += [f"{ours * 1e3:.3f}", f"{r[kind]['torch_eager'] / ours:.2f}",
                          f"{calm[kind]['torch_eager'] / ours:.2f}"]
            print(f"| {mode.replace('fw_', '')}, {name} | " + " | ".join(cells) + " |")
        print(f"| (torch eager in that process) | {r['train_s']['torch_eager'] * 1e3:.3f} | | | "
              f"{r['infer_s']['torch_eager'] * 1e3:.3f} | | |")
    print("\n" + json.dumps(results))


if __name__ == "__main__":
    main()
