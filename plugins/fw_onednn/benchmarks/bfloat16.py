"""bfloat16 on the cpu: a 576x576 matmul's speed against float32, and a transformer block's
error against its float32 forward. All figures come from one run (compare only within it).

    OPENBLAS_NUM_THREADS=1 python plugins/fw_onednn/benchmarks/bfloat16.py [--size 576]

Speed: seconds per ``a @ b`` through fw's dispatch (fw_onednn serves float32 and, where the CPU
has the bf16 instructions, bfloat16), through fw_cpu's kernel alone (bfloat16 upcast to float32,
one GEMM, rounded), and torch's own, the candidates taking turns. Accuracy: the LLaMA-style block of
tests/fw_core/test_bfloat16.py (RMSNorm, causal attention over 4 heads, SwiGLU MLP, residuals;
dim 256, 688 hidden, 2 x 64 tokens) on random inputs, run in bfloat16 and in float32 from the
same float32 weights; the max absolute error and the max error relative to the output's largest
magnitude, of bfloat16 against float32 (and of float32 against float64, the floor).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # NumPy's BLAS threads fight oneDNN's

import numpy as np  # noqa: E402
from timing import in_turns  # noqa: E402

import fw_core as fw  # noqa: E402


def matmul_speed(size: int, rounds: int) -> dict[str, float]:
    """Seconds per (size x size) product for each path, in turns."""
    import torch

    from fw_cpu.kernels import linalg

    rng = np.random.default_rng(0)
    a32 = fw.tensor(rng.standard_normal((size, size)).astype(np.float32))
    b32 = fw.tensor(rng.standard_normal((size, size)).astype(np.float32))
    a16, b16 = a32.bfloat16(), b32.bfloat16()
    cpu_matmul = linalg.kernels(np, None)["matmul"]
    ta32, tb32 = torch.from_numpy(a32.numpy()), torch.from_numpy(b32.numpy())
    ta16, tb16 = ta32.bfloat16(), tb32.bfloat16()
    return in_turns({
        "fw float32": (fw.matmul, (a32, b32)),
        "fw bfloat16": (fw.matmul, (a16, b16)),
        "fw_cpu bfloat16 (float32 upcast)": (cpu_matmul, (a16.numpy(), b16.numpy())),
        "torch float32": (torch.matmul, (ta32, tb32)),
        "torch bfloat16": (torch.matmul, (ta16, tb16)),
    }, rounds)


def block_error(dim: int = 256, hidden: int = 688, length: int = 64) -> dict[str, float]:
    """Max and median absolute error of tests/fw_core/test_bfloat16.py's LLaMA-style block run in
    bfloat16 against the same block in float32 (and float32's own against float64), the
    relative figure over the output's largest magnitude."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]))
    from tests.fw_core.test_bfloat16 import block_weights, llama_block

    weights = block_weights(dim, hidden, seed=1)
    x = np.random.default_rng(2).standard_normal((2, length, dim)).astype(np.float32)

    def run(dtype):
        out = llama_block(fw, fw.tensor(x).to(dtype),
                          {k: fw.tensor(v).to(dtype) for k, v in weights.items()}, heads=4)
        return out.to(fw.float64).numpy()

    exact, single, half = run(fw.float64), run(fw.float32), run(fw.bfloat16)
    peak = np.abs(exact).max()
    return {"bf16 vs fp32 max abs": np.abs(half - single).max(),
            "bf16 vs fp32 max rel": np.abs(half - single).max() / peak,
            "bf16 vs fp32 median abs": float(np.median(np.abs(half - single))),
            "fp32 vs fp64 max abs": np.abs(single - exact).max(),
            "output max |y|": peak}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=576)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    fw.tensor([0.0])  # load the plugins
    try:
        import fw_onednn
        from fw_onednn import cache, kernels

        a = np.ones((args.size, args.size), fw.bfloat16.numpy)
        served = kernels.takes_matmul(a, a) is not None
        print(f"oneDNN {fw_onednn.version()} isa {fw_onednn.cpu_isa()}: bf16 matmul "
              f"{'served by ' + cache.PRIMITIVES.latest().impl if served else 'refused'}")
    except ImportError:
        print("fw_onednn not installed: fw_cpu's float32-upcast path serves bfloat16")
    times = matmul_speed(args.size, args.rounds)
    flops = 2 * args.size ** 3
    for name, seconds in times.items():
        print(f"{name:34s} {seconds * 1e6:9.1f} us  {flops / seconds / 1e9:7.1f} GFLOP/s")
    print(f"fw bfloat16 / fw float32 time: {times['fw bfloat16'] / times['fw float32']:.2f}")
    print(f"torch bfloat16 / torch float32 time: "
          f"{times['torch bfloat16'] / times['torch float32']:.2f}")
    for name, value in block_error().items():
        print(f"{name:26s} {value:.3g}")


if __name__ == "__main__":
    main()
