"""oneDNN's OpenMP threads and NumPy's OpenBLAS threads in one process: alone and taking turns.

    python plugins/fw_onednn/benchmarks/threads.py [--calls 200]

Each configuration runs in a fresh process (thread-pool settings must be made before the
libraries start their threads): a float32 GEMM through fw_onednn's matmul kernel and the same
GEMM through NumPy (``a @ b``), each alone, then alternating call by call, timing each call.
Both pools busy-wait for a while after a call (libgomp's ``GOMP_SPINCOUNT``, OpenBLAS's own
spin); two pools of 2 threads taking turns on 2 cores wait for each other's spinning threads.

Configurations: OpenBLAS on all threads (fw's hold on it lifted with threadpoolctl); OpenBLAS on
one thread as fw sets it while fw_onednn is loaded (threadpoolctl); ``OPENBLAS_NUM_THREADS=1``
at start; ``OMP_WAIT_POLICY=PASSIVE`` (libgomp's threads sleep at once) with OpenBLAS on all
threads.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

#: name -> (environment, OpenBLAS threads set with threadpoolctl after load: None keeps fw's)
CONFIGS = {
    "OpenBLAS on all threads": ({}, "all"),
    "OpenBLAS on 1 thread (fw's hold, threadpoolctl)": ({}, None),
    "OPENBLAS_NUM_THREADS=1": ({"OPENBLAS_NUM_THREADS": "1"}, None),
    "OMP_WAIT_POLICY=PASSIVE, OpenBLAS on all threads": ({"OMP_WAIT_POLICY": "PASSIVE"}, "all"),
}
SHAPE = (256, 784, 512)  # (M, K, N): ~100 M multiply-adds, ~0.5 ms


def _child(blas: str | None, calls: int) -> dict:
    import numpy as np
    from threadpoolctl import threadpool_info, threadpool_limits

    import fw_core as fw
    from fw_onednn import plugin

    if not any(i.name == plugin.NAME and i.state == "loaded" for i in fw.plugins.info()):
        fw.plugins.register(plugin, plugin.NAME)  # this checkout, when it is not installed
    if blas == "all":
        threadpool_limits(limits=os.cpu_count(), user_api="blas")
    m, k, n = SHAPE
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32)
    fw.device("cpu")  # loads oneDNN and composes the cpu kernels
    from fw_onednn import kernels

    onednn = fw.ops.registry.kernel("matmul", "cpu")
    assert kernels.takes_matmul(a, b)

    def numpy(x, y):
        return x @ y

    def timed(fn):
        start = time.perf_counter()
        fn(a, b)
        return time.perf_counter() - start

    for _ in range(20):
        onednn(a, b), numpy(a, b)
    alone_onednn = [timed(onednn) for _ in range(calls)]
    alone_numpy = [timed(numpy) for _ in range(calls)]
    turns = [(timed(onednn), timed(numpy)) for _ in range(calls)]
    return {"onednn alone": statistics.median(alone_onednn),
            "numpy alone": statistics.median(alone_numpy),
            "onednn in turns": statistics.median(t[0] for t in turns),
            "numpy in turns": statistics.median(t[1] for t in turns),
            "pools": [(p["internal_api"], p["num_threads"]) for p in threadpool_info()]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        json.dump(_child(None if args.child == "fw" else args.child, args.calls), sys.stdout)
        return
    m, k, n = SHAPE
    print(f"# {m}x{k} @ {k}x{n} float32, {os.cpu_count()} CPUs; median ms per call "
          f"(in turns: each call of an alternating oneDNN, NumPy, oneDNN, ... sequence)")
    print(f"{'configuration':50} {'oneDNN':>7} {'NumPy':>7} {'oneDNN':>7} {'NumPy':>7}  pools")
    print(f"{'':50} {'alone':>7} {'alone':>7} {'turns':>7} {'turns':>7}")
    inherited = {k: v for k, v in os.environ.items()
                 if k not in ("OPENBLAS_NUM_THREADS", "OMP_WAIT_POLICY")}
    for name, (env, blas) in CONFIGS.items():
        out = subprocess.run(
            [sys.executable, __file__, "--child", blas or "fw", "--calls", str(args.calls)],
            env={**inherited, **env}, capture_output=True, text=True, check=True)
        r = json.loads(out.stdout)
        print(f"{name:50} {r['onednn alone'] * 1e3:7.3f} {r['numpy alone'] * 1e3:7.3f} "
              f"{r['onednn in turns'] * 1e3:7.3f} {r['numpy in turns'] * 1e3:7.3f}  {r['pools']}")


if __name__ == "__main__":
    main()
