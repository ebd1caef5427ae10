"""A training run whose sequence length changes every step (drawn from 8..64), compiled.

It shows what the shape-aware plan cache does with a dimension that keeps changing: one
first compile, then partial rebuilds (the graph is traced again but fused kernels come from the
kernel cache) until the scheduler marks the dimension dynamic, bounded by the LRU cache, each
with its reason in ``explain()``. It prints the compile and rebuild times, the counters, and
the eager time of the same run for comparison.

    python benchmarks/dynamic_shapes.py [--steps 60] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

for _name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # benchmarks only: see README
    os.environ.pop(_name, None)

import numpy as np  # noqa: E402

import fw_core as fw  # noqa: E402

D, HEADS, FFN, LAYERS, MAX_SEQ, VOCAB, BATCH = 128, 4, 512, 2, 64, 1000, 16


class EncoderLM(fw.nn.Module):
    """The benchmark transformer, taking any sequence length up to MAX_SEQ."""

    def __init__(self):
        super().__init__()
        self.tokens = fw.nn.Embedding(VOCAB, D)
        self.positions = fw.nn.Embedding(MAX_SEQ, D)
        self.layers = fw.nn.ModuleList(
            fw.nn.TransformerEncoderLayer(D, HEADS, FFN, dropout=0.0, activation="gelu",
                                          batch_first=True, norm_first=True)
            for _ in range(LAYERS))
        self.norm = fw.nn.LayerNorm(D)
        self.head = fw.nn.Linear(D, VOCAB)

    def forward(self, tokens):
        seq = tokens.shape[1]
        x = self.tokens(tokens) + self.positions(fw.arange(seq))
        mask = fw.triu(fw.full((seq, seq), float("-inf")), diagonal=1)
        for layer in self.layers:
            x = layer(x, src_mask=mask, is_causal=True)
        return self.head(self.norm(x))


def run(steps: int, compiled: bool, lengths: list[int]) -> dict:
    fw.manual_seed(0)
    model = EncoderLM()
    opt = fw.optim.AdamW(model.parameters(), lr=1e-3)

    def train_step(tokens, targets):
        opt.zero_grad()
        logits = model(tokens)
        loss = fw.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
        loss.backward()
        opt.step()
        return loss

    step = fw.compile(train_step, name="dynamic_lm_step") if compiled else train_step
    rng = np.random.default_rng(1)
    times = []
    for n in lengths[:steps]:
        tokens = fw.tensor(rng.integers(0, VOCAB, (BATCH, n)))
        targets = fw.tensor(rng.integers(0, VOCAB, (BATCH, n)))
        start = time.perf_counter()
        step(tokens, targets)
        times.append(time.perf_counter() - start)
    result = {"total_s": sum(times)}
    if compiled:
        events = step.events
        result.update({
            "counts": dict(step.counts), "cache": step.cache.info(),
            "first_compile_s": step.compile_seconds[0],
            "partial_rebuild_s_median": statistics.median(step.compile_seconds[1:])
            if len(step.compile_seconds) > 1 else None,
            "explain_head": events[:6],
            "dynamic": [e for e in events if "dynamic" in e and "is dynamic" not in e]})
    return result


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    lengths = [int(n) for n in np.random.default_rng(0).integers(8, MAX_SEQ + 1, args.steps)]
    report = {"lengths": lengths, "distinct_lengths": len(set(lengths)),
              "compiled": run(args.steps, True, lengths),
              "eager": run(args.steps, False, lengths)}
    c = report["compiled"]
    print(f"{args.steps} steps, {report['distinct_lengths']} distinct lengths in 8..{MAX_SEQ}")
    print(f"compiled: {c['counts']}; cache {c['cache']}")
    print(f"first compile {c['first_compile_s']:.2f} s; partial rebuild median "
          f"{c['partial_rebuild_s_median']:.2f} s")
    print(f"run time: compiled {c['total_s']:.1f} s, eager {report['eager']['total_s']:.1f} s")
    for line in c["explain_head"] + c["dynamic"]:
        print("  " + line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return report


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
