"""What generate adds per token at SmolLM2's vocabulary (49,152), one row: a model whose forward
costs nothing, so all that is timed is choosing the token and the bookkeeping around it.

Run: ``python benchmarks/generation_step.py`` (a benchmark: no timing
assertions). Prints the median of 5 runs of 200 tokens per setting: wall time, and the
process's CPU time (less sensitive to other processes sharing the cores).
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np

import fw_core as fw

VOCAB = 49152
SETTINGS = {
    "greedy": {},
    "greedy, repetition_penalty=1.2": {"repetition_penalty": 1.2},
    "sample, top_k=0 (softmax only)": {"do_sample": True, "top_k": 0},
    "sample, HF defaults (top_k=50)": {"do_sample": True},
    "sample, top_k=0, min_p=0.05": {"do_sample": True, "top_k": 0, "min_p": 0.05},
    "sample, T=0.7, top_k=50, top_p=0.9": {"do_sample": True, "temperature": 0.7, "top_p": 0.9},
    "sample, top_k=0, top_p=0.9": {"do_sample": True, "top_k": 0, "top_p": 0.9},
    "sample, all (rep 1.2, T 0.7, k 50, p 0.9, min_p 0.05)": {
        "do_sample": True, "repetition_penalty": 1.2, "temperature": 0.7, "top_p": 0.9,
        "min_p": 0.05},
}


class _Cache:
    def __init__(self, max_length: int):
        self.length, self.max_length = 0, max_length


class FixedLogits(fw.generation.GenerationMixin):
    """The protocol with a forward that returns the same (1, 1, vocab) logits every call."""

    config = SimpleNamespace(vocab_size=VOCAB, max_position_embeddings=4096, eos_token_id=None,
                             pad_token_id=None)

    def __init__(self, spread: float = 3.0):
        values = np.random.default_rng(0).normal(0, spread, (1, 1, VOCAB)).astype(np.float32)
        self.logits = fw.tensor(values)

    def new_cache(self, batch_size: int, max_length: int) -> _Cache:
        return _Cache(max_length)

    def __call__(self, input_ids, cache=None, attention_mask=None, position_ids=None):
        cache.length += input_ids.shape[1]
        return self.logits


def main() -> None:
    model, prompt, tokens = FixedLogits(), fw.tensor([list(range(1, 300))]), 200
    for name, settings in SETTINGS.items():
        model.generate(prompt, max_new_tokens=10, **settings)
        wall, cpu = [], []
        for _ in range(5):
            start, start_cpu = time.perf_counter(), time.process_time()
            model.generate(prompt, max_new_tokens=tokens, **settings)
            wall.append((time.perf_counter() - start) / tokens)
            cpu.append((time.process_time() - start_cpu) / tokens)
        print(f"{name:55s} {np.median(wall) * 1e6:6.0f} us/token wall, "
              f"{np.median(cpu) * 1e6:6.0f} us CPU")


if __name__ == "__main__":
    main()
