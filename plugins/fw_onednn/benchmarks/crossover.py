"""Where oneDNN starts to beat fw_cpu: the data behind ``fw_onednn.set_min_work``'s default.

    python plugins/fw_onednn/benchmarks/crossover.py [--threads 2]

For float32 products (M, K) @ (K, N) over a grid of M, K and N, the time of fw's cpu matmul
with oneDNN taking every call (``set_min_work(0, matrix_vector=True)``) against fw_cpu's NumPy
kernel as it runs while fw_onednn is loaded (OpenBLAS on one thread), and their ratio: above 1,
oneDNN is faster. Best of three ~5 ms timings each.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from timing import seconds_per_call

ROWS = (1, 2, 4, 8, 16, 32, 64, 128)
INNER = (16, 64, 128, 512, 784)
COLUMNS = (10, 64, 512)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    import scipy.special

    import fw_core as fw
    import fw_onednn
    from fw_cpu.kernels import linalg

    fw.set_num_threads(args.threads)
    fw_onednn.set_min_work(0, matrix_vector=True)
    chain = fw.ops.registry.kernel("matmul", "cpu")
    cpu = linalg.kernels(np, scipy.special)["matmul"]
    rng = np.random.default_rng(0)
    print(f"# NumPy time / oneDNN time, {args.threads} threads, oneDNN {fw_onednn.version()} on "
          f"{fw_onednn.cpu_isa()}; columns K x N")
    print("M \\ K,N " + " ".join(f"{k:>4},{n:<4}" for k in INNER for n in COLUMNS))
    crossings = []
    for m in ROWS:
        cells = []
        for k in INNER:
            for n in COLUMNS:
                a = rng.standard_normal((m, k)).astype(np.float32)
                b = rng.standard_normal((k, n)).astype(np.float32)
                onednn = min(seconds_per_call(chain, a, b, seconds=0.005) for _ in range(3))
                numpy = min(seconds_per_call(cpu, a, b, seconds=0.005) for _ in range(3))
                cells.append(f"{numpy / onednn:9.2f}")
                crossings.append((m * k * n, numpy / onednn, m))
        print(f"{m:<7} " + " ".join(cells))
    wins = sorted(w for w, ratio, m in crossings if ratio > 1 and m > 1)
    losses = sorted(w for w, ratio, m in crossings if ratio < 1 and m > 1)
    print(f"smallest product oneDNN wins (M > 1): {wins[0] if wins else None} multiply-adds; "
          f"largest it loses: {losses[-1] if losses else None}; default min work "
          f"{fw_onednn.kernels.DEFAULT_MIN_WORK}")


if __name__ == "__main__":
    main()
