"""The cnn workload (``benchmarks/workloads/cnn.py``: two conv + ReLU + max-pool stages, two
linear layers, cross-entropy, SGD with momentum) in fw eager and compiled with fw_onednn, against
PyTorch eager, in one process.

    python plugins/fw_onednn/benchmarks/cnn.py [--rounds 7] [--threads 2]

fw eager, fw compiled and PyTorch eager take turns round by round (a shared machine's load then
falls on all three alike); the ratios are fw's time over PyTorch's, so below 1 fw is faster. It
times a training step on the batch of 64 and inference on batches of 1 and 64, and prints one
table, the machine and the seconds as JSON: each candidate's best round, since a shared
machine only ever adds time. ``--threads`` sets fw's pools and PyTorch's
alike (default: every CPU); on a shared machine one thread each is the steadier figure, since
a spinning OpenMP team whose cores another process takes waits for whole time slices.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[3]
MODES = ("fw_eager", "fw_compiled", "torch_eager")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from timing import in_turns, warm_sessions

    import fw_core as fw

    fw.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    sessions = warm_sessions("cnn", MODES, (1, 64))
    times = {
        "train": in_turns({m: (s.train, ()) for m, s in sessions.items()}, args.rounds, min),
        "infer 1": in_turns({m: (s.infer, (1,)) for m, s in sessions.items()}, args.rounds,
                            min),
        "infer 64": in_turns({m: (s.infer, (64,)) for m, s in sessions.items()}, args.rounds,
                             min),
    }
    print(f"cnn workload, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"{args.threads} threads; fw's time / PyTorch eager's (<1: fw faster)\n")
    print("| | " + " | ".join(f"{k} (ms) | x torch" for k in times) + " |")
    print("| --- |" + " --- | --- |" * len(times))
    for mode in MODES:
        cells = []
        for t in times.values():
            cells += [f"{t[mode] * 1e3:.3f}", f"{t[mode] / t['torch_eager']:.2f}"]
        print(f"| {mode} | " + " | ".join(cells) + " |")
    print("\n" + json.dumps(times))


if __name__ == "__main__":
    main()
