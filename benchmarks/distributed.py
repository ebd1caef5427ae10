"""Data-parallel scaling of fw-mpi: samples/s of 2 ranks x 1 thread against 1 rank x 1 thread.

    python benchmarks/distributed.py [--workloads mlp,cnn] [--buckets 0.25,1,4,25] [--quick]
    python benchmarks/distributed.py --model      the ring all-reduce model at 8, 64, 512 ranks

For each workload (benchmarks/workloads, its own train batch per rank, its optimizer, eager
steps) it launches ``mpiexec -n 1`` without DistributedDataParallel (the baseline), ``-n 1``
with it, ``-n 2`` without it (two independent trainings: the most two ranks can reach on this
machine at this moment) and ``-n 2`` with it for each bucket size. Each run times rounds of
steps between barriers on rank 0 and reports the median round; also the seconds per step
spent waiting for the all-reduces after backward (what overlap did not hide) and the bytes a
rank passed to all-reduces per step against its gradient bytes. Every process gets one thread
(OMP/OpenBLAS/Numba). The machine may be shared: configurations are repeated interleaved
(``--repeats``) and the best and median runs reported; compare only the rows of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def worker(name: str, wrapped: bool, bucket_mb: float, steps: int, rounds: int) -> None:
    """One rank of a run; rank 0 prints the result as JSON."""
    import numpy as np

    import fw_core as fw
    import fw_mpi
    from benchmarks.workloads import WORKLOADS
    from benchmarks.workloads.common import fw_lib

    fw_mpi.init()
    fw.set_num_threads(1)
    workload, lib = WORKLOADS[name], fw_lib()
    fw.manual_seed(0)
    model = workload.build(lib)
    ddp = fw_mpi.DistributedDataParallel(model, bucket_cap_mb=bucket_mb) if wrapped else None
    net = ddp if wrapped else model
    opt = workload.optimizer(fw.optim, net.parameters())
    x, y = workload.data(workload.train_batch, np.random.default_rng(fw_mpi.rank()))
    x, y = fw.tensor(x), fw.tensor(y)
    waited = [0.0]
    if wrapped:
        finish = ddp.reducer._finish

        def timed_finish():
            start = time.perf_counter()
            finish()
            waited[0] += time.perf_counter() - start
        ddp.reducer._finish = timed_finish

    def step():
        loss = workload.loss(lib, net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    for _ in range(3):
        step()
    sent0, waited[0] = ddp.communicated_bytes if wrapped else 0, 0.0
    times = []
    for _ in range(rounds):
        fw_mpi.barrier()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        fw_mpi.barrier()
        times.append(time.perf_counter() - start)
    if fw_mpi.rank() == 0:
        ranks = fw_mpi.size()
        median = statistics.median(times)
        grad_bytes = sum(p._data.nbytes for p in model.parameters())
        print(json.dumps({
            "workload": name, "ranks": ranks, "ddp": wrapped, "bucket_mb": bucket_mb,
            "buckets": len(ddp.buckets) if wrapped else 0,
            "samples_per_s": ranks * workload.train_batch * steps / median,
            "ms_per_step": 1e3 * median / steps,
            "wait_ms_per_step": 1e3 * waited[0] / (steps * rounds),
            "bytes_per_step": (ddp.communicated_bytes - sent0) / (steps * rounds)
            if wrapped else 0, "gradient_bytes": grad_bytes}), flush=True)


#: the cluster the model assumes: link bandwidth (bytes/s, 100 Gb/s InfiniBand) and per-message
#: latency (s) between nodes
BANDWIDTH, LATENCY = 12.5e9, 5e-6
#: model -> (gradient bytes, seconds of compute per step per rank): the MLP and CNN from this
#: machine's 1-thread, 1-rank baseline (benchmarks/distributed.py), the 100 M-parameter model as
#: 6 * P * 16k tokens on one ~400 TFLOP/s accelerator
MODELS = {"mlp": (2_143_272, 2.4e-3), "cnn": (827_688, 7.2e-3),
          "100M params": (400e6, 6 * 100e6 * 16384 / 400e12)}


def ring_seconds(nbytes: float, ranks: int) -> float:
    """A ring all-reduce: 2(N-1) steps, each moving 1/N of the data over one link."""
    return 2 * (ranks - 1) / ranks * nbytes / BANDWIDTH + 2 * (ranks - 1) * LATENCY


def tree_seconds(nbytes: float, ranks: int) -> float:
    """A hierarchical/tree all-reduce's latency (2 log2 N steps) with the ring's bandwidth."""
    import math

    return 2 * (ranks - 1) / ranks * nbytes / BANDWIDTH + 2 * math.log2(ranks) * LATENCY


def print_model() -> None:
    print(f"ring all-reduce at {BANDWIDTH / 1e9:g} GB/s per link, {LATENCY * 1e6:g} us per "
          "message; efficiency = compute / (compute + all-reduce), no overlap")
    print(f"{'model':>12} {'ranks':>5} {'grad MB':>8} {'compute ms':>10} {'ring ms':>8} "
          f"{'ring eff':>8} {'tree ms':>8} {'tree eff':>8}")
    for name, (nbytes, compute) in MODELS.items():
        for ranks in (8, 64, 512):
            ring, tree = ring_seconds(nbytes, ranks), tree_seconds(nbytes, ranks)
            print(f"{name:>12} {ranks:>5} {nbytes / 1e6:>8.2f} {compute * 1e3:>10.2f} "
                  f"{ring * 1e3:>8.2f} {compute / (compute + ring):>8.2f} {tree * 1e3:>8.2f} "
                  f"{compute / (compute + tree):>8.2f}")


def launch(ranks: int, *args) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    from fw_mpi.launch import find_mpiexec

    done = subprocess.run([find_mpiexec(), "-n", str(ranks), sys.executable, __file__, "--worker",
                           *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=900)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="mlp,cnn")
    parser.add_argument("--buckets", default="0.25,1,4,25")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", action="store_true", help="print the scaling model only")
    parser.add_argument("--worker", nargs=5, metavar=("W", "DDP", "MB", "STEPS", "ROUNDS"))
    args = parser.parse_args()
    if args.model:
        print_model()
        return
    if args.worker:
        name, wrapped, mb, steps, rounds = args.worker
        worker(name, wrapped == "1", float(mb), int(steps), int(rounds))
        return
    plan = {"mlp": (20, 7), "cnn": (5, 7)}
    for name in args.workloads.split(","):
        steps, rounds = (2, 2) if args.quick else plan.get(name, (5, 5))
        # (2, 0): two ranks training apart, no communication: what the machine's cores allow
        configs = [(1, 0, 25), (1, 1, 25), (2, 0, 25),
                   *((2, 1, float(mb)) for mb in args.buckets.split(","))]
        # repeats interleaved, so a busy spell of the shared machine hits every configuration
        runs = {c: [] for c in configs}
        for _ in range(1 if args.quick else args.repeats):
            for ranks, wrapped, mb in configs:
                runs[(ranks, wrapped, mb)].append(launch(ranks, name, wrapped, mb, steps, rounds))
        base = max(r["samples_per_s"] for r in runs[configs[0]])
        print(f"\n{name}: train batch per rank, eager, 1 thread per rank; samples/s best and "
              f"median of {len(runs[configs[0]])} interleaved runs")
        print(f"{'ranks':>5} {'DDP':>4} {'bucket MB':>9} {'buckets':>7} {'best/s':>8} "
              f"{'x base':>6} {'median/s':>8} {'ms/step':>8} {'wait ms':>8} {'bytes/step':>11} "
              f"{'grad bytes':>11}")
        for config in configs:
            r = max(runs[config], key=lambda x: x["samples_per_s"])
            median = statistics.median(x["samples_per_s"] for x in runs[config])
            print(f"{r['ranks']:>5} {'yes' if r['ddp'] else 'no':>4} {r['bucket_mb']:>9g} "
                  f"{r['buckets']:>7} {r['samples_per_s']:>8.0f} "
                  f"{r['samples_per_s'] / base:>6.2f} {median:>8.0f} {r['ms_per_step']:>8.2f} "
                  f"{r['wait_ms_per_step']:>8.3f} {r['bytes_per_step']:>11.0f} "
                  f"{r['gradient_bytes']:>11}")


if __name__ == "__main__":
    main()
