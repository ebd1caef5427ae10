"""fw against PyTorch 2.13, training the same models step for step: a table for the issue note.

    python benchmarks/agreement.py [--data mnist|synthetic] [--seed S] [--steps N]
                                   [--per-step] [--json PATH]

For each (model, optimizer, dtype) of tests/fw_core/test_torch_training_agreement.py (which
this script reuses, so both always run the same thing), it trains the MLP or the CNN in both
frameworks from PyTorch's initial weights (``torch.manual_seed(S)``) on the same batches of 32
and prints the largest relative loss difference over the steps (and at which step), the final
parameter difference (max |fw - torch| / max |torch|, worst tensor), and each framework's time.

For float32 rows it also prints how far each framework's losses are from PyTorch's float64 run
of the same configuration. When float32 fw and PyTorch part ways, this says which one left the
float64 path: a 2x2 max-pool window whose two largest values lie within one float32 rounding can
send a float32 gradient to another pixel, and SGD momentum grows that one change (see the test
module's docstring). ``--data synthetic`` (continuous random images: class templates plus
noise) and other seeds show it, e.g. ``--seed 4`` (PyTorch leaves) and ``--data synthetic
--seed 9`` (fw leaves); ``--per-step`` prints each step's relative loss difference. (On the
synthetic data the MLP with SGD drives the loss to ~1e-5, where a float32 loss is only good to
~1e-3 relative in either framework.)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for tests/

from tests.fw_core.test_torch_training_agreement import (  # noqa: E402
    BATCH,
    DTYPES,
    LOSS_RTOL,
    MODELS,
    OPTIMIZERS,
    PARAM_RTOL,
    STEPS,
    mnist_batches,
    relative_difference,
    single_threaded,
    train_both,
)


def synthetic_batches(steps: int, batch: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Images (steps, batch, 1, 28, 28): one random template per class plus N(0, 0.5^2) noise,
    so every pixel is continuous and the classes overlap; labels (steps, batch) int64."""
    rng = np.random.default_rng(seed)
    templates = rng.random((10, 1, 28, 28))
    labels = rng.integers(0, 10, (steps, batch))
    images = templates[labels] + 0.5 * rng.standard_normal((steps, batch, 1, 28, 28))
    return images, labels


def measure(data: str, steps: int, seed: int) -> list[dict]:
    """One row per (model, optimizer, dtype)."""
    if data == "mnist":
        images, labels = mnist_batches(steps, BATCH)
    else:
        images, labels = synthetic_batches(steps, BATCH)
    rows = []
    with single_threaded():
        for model in MODELS:
            for optimizer in OPTIMIZERS:
                runs = {dtype: train_both(model, optimizer, dtype, images, labels, seed)
                        for dtype in DTYPES}
                exact = runs["float64"].torch_losses
                for dtype, run in runs.items():
                    loss = run.loss_difference()
                    params = run.param_difference()
                    worst = max(params, key=params.get)
                    rows.append({
                        "model": model, "optimizer": optimizer, "dtype": dtype,
                        "first_loss": float(run.torch_losses[0]),
                        "last_loss": float(run.torch_losses[-1]),
                        "max_loss_rel": float(loss.max()), "worst_step": int(loss.argmax()),
                        "loss_rel_per_step": loss.tolist(),
                        "param_rel": params[worst], "worst_param": worst,
                        "fw_vs_float64": float(relative_difference(run.fw_losses, exact).max()),
                        "torch_vs_float64": float(
                            relative_difference(run.torch_losses, exact).max()),
                        "fw_s": run.fw_seconds, "torch_s": run.torch_seconds,
                        "within": bool(loss.max() <= LOSS_RTOL[dtype]
                                       and params[worst] <= PARAM_RTOL[dtype]),
                    })
    return rows


def distance(row: dict, side: str) -> str:
    """The float32 row's distance from PyTorch float64, or '-' for a float64 row."""
    return "-" if row["dtype"] == "float64" else f"{row[side + '_vs_float64']:.0e}"


def print_table(rows: list[dict], per_step: bool) -> None:
    header = (f"{'model':5} {'optim':5} {'dtype':7} {'loss 0 -> last':>16} "
              f"{'max loss rel':>12} {'@step':>5} {'param rel':>9} {'(tensor)':<10} "
              f"{'fw-f64':>7} {'pt-f64':>7} {'fw s':>5} {'torch s':>7}  within tol")
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['model']:5} {r['optimizer']:5} {r['dtype']:7} "
              f"{r['first_loss']:7.4f} -> {r['last_loss']:6.4f} {r['max_loss_rel']:12.2e} "
              f"{r['worst_step']:5d} {r['param_rel']:9.2e} {r['worst_param']:<10} "
              f"{distance(r, 'fw'):>7} {distance(r, 'torch'):>7} {r['fw_s']:5.2f} "
              f"{r['torch_s']:7.2f}  {'yes' if r['within'] else 'NO'}")
    print(f"tolerances: loss per step {LOSS_RTOL}, final parameters {PARAM_RTOL}")
    print("fw-f64 / pt-f64: largest relative loss difference of fw / PyTorch float32 from "
          "PyTorch float64")
    if per_step:
        for r in rows:
            print(f"\n{r['model']}/{r['optimizer']}/{r['dtype']}: relative loss difference "
                  "per step")
            values = r["loss_rel_per_step"]
            for start in range(0, len(values), 10):
                print(f"  {start:3d}: " + " ".join(f"{v:8.1e}" for v in values[start:start + 10]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=("mnist", "synthetic"), default="mnist")
    parser.add_argument("--seed", type=int, default=0, help="PyTorch seed of the initial "
                        "weights (the test uses 0)")
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--per-step", action="store_true",
                        help="also print every step's relative loss difference")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    args = parser.parse_args()
    rows = measure(args.data, args.steps, args.seed)
    print(f"data: {args.data}, init seed {args.seed}, {args.steps} steps of {BATCH}, one BLAS / "
          "torch thread\n")
    print_table(rows, args.per_step)
    if args.json:
        Path(args.json).write_text(json.dumps({"data": args.data, "seed": args.seed,
                                               "steps": args.steps, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
