"""SmolLM2-135M-Instruct generation: fw (fw_zoo) against transformers on the same GGUF file.

    python -m benchmarks.llm [--rounds 5] [--prompt-tokens 64] [--new-tokens 128] [--out R.json]

Batch 1, greedy, float32, 2 threads. Each side runs in a worker process of its own (torch's
OpenMP threads and NumPy's OpenBLAS threads in one process slow each other down many times
over), loaded once; the parent times them in alternating rounds, so a slow spell of a shared
machine hits every side of a round (fw's ratios to the other side are medians of per-round
ratios). Measured: prefill tokens/s (one forward over the prompt, filling the cache) and
decode tokens/s (the new tokens after the first). fw is timed with its
compiled decode step (the default) and eager (``compiled_decode=False``). The other side is
transformers' ``generate`` on ``AutoModelForCausalLM.from_pretrained(dir, gguf_file=...)``
(fp32) when transformers is importable (decode: the tokens after the first over
``generate(n tokens) - generate(1 token)``), else the hand-written torch LLaMA of fw_zoo's
tests. Decode GB/s is the weight bytes read per token times tokens/s, given as a fraction of
the machine's copy bandwidth measured in the same run (a large NumPy copy: read + write). Peak
RSS is each worker's ``ru_maxrss`` after its runs (load and generation). The workers inherit
the environment: on a shared machine ``OMP_WAIT_POLICY=PASSIVE`` keeps OpenMP threads (torch's,
oneDNN's) from spinning against busy cores; the result records it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

TEXT = ("The history of the printing press begins in the fifteenth century, when Johannes "
        "Gutenberg combined movable metal type, oil-based ink and a screw press adapted from "
        "wine making. Within fifty years presses were running in more than two hundred "
        "European cities, and the price of books fell so sharply that reading spread")
THREADS = 2


def prompt_ids(tokenizer, n: int) -> list[int]:
    """The first ``n`` tokens of :data:`TEXT` (repeated as needed)."""
    ids: list[int] = []
    while len(ids) < n:
        ids += tokenizer.encode(TEXT + " ")
    return ids[:n]


def copy_bandwidth(nbytes: int = 1 << 30, repeats: int = 5) -> float:
    """The best GB/s of ``np.copyto`` over ``nbytes`` (bytes read + bytes written)."""
    a = np.ones(nbytes // 4, np.float32)
    b = np.empty_like(a)
    best = min(_seconds(np.copyto, b, a) for _ in range(repeats))
    return 2 * nbytes / best / 1e9


def _seconds(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


# -- the sides ------------------------------------------------------------------------------------
class FwSide:
    """fw_zoo's model: prefill, then greedy steps through the protocol."""

    def __init__(self, compiled: bool):
        import fw_core as fw
        import fw_zoo

        fw.set_num_threads(THREADS)
        self.fw = fw
        self.model = fw_zoo.load("smollm2-135m-instruct")
        self.compiled = compiled
        self.name = "fw compiled" if compiled else "fw eager"
        self.tokenizer = self.model.tokenizer
        tied = {id(p): p for p in self.model.parameters()}
        self.weight_bytes = sum(p.numel() * 4 for p in tied.values())

    def run(self, ids: list[int], new_tokens: int) -> tuple[float, float, list[int]]:
        """(prefill seconds, seconds of the new tokens after the first, the tokens)."""
        fw, model = self.fw, self.model
        model.compiled_decode = self.compiled
        with fw.no_grad():
            cache = model.new_cache(1, len(ids) + new_tokens)
            start = time.perf_counter()
            logits = model(fw.tensor([ids]), cache=cache)
            out = [int(logits.numpy()[0, -1].argmax())]
            prefill = time.perf_counter() - start
            start = time.perf_counter()
            for _ in range(new_tokens - 1):
                logits = model(fw.tensor([[out[-1]]]), cache=cache)
                out.append(int(logits.numpy()[0, -1].argmax()))
        return prefill, time.perf_counter() - start, out


class TransformersSide:
    """transformers' LlamaForCausalLM from the same GGUF, fp32, through ``generate``."""

    name = "transformers"

    def __init__(self):
        import torch
        from transformers import AutoModelForCausalLM

        from fw_zoo import smollm2

        torch.set_num_threads(THREADS)
        path = smollm2.gguf_path()
        self.torch = torch
        self.model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                                          dtype=torch.float32).eval()

    def run(self, ids: list[int], new_tokens: int) -> tuple[float, float, list[int]]:
        torch = self.torch
        x = torch.tensor([ids])
        kwargs = {"do_sample": False, "pad_token_id": 2}
        with torch.no_grad():
            one = _seconds(lambda: self.model.generate(x, max_new_tokens=1, **kwargs))
            start = time.perf_counter()
            out = self.model.generate(x, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                                      **kwargs)
            total = time.perf_counter() - start
        return one, total - one, out[0, len(ids):].tolist()


class TorchReferenceSide:
    """The hand-written torch LLaMA of fw_zoo's tests (when transformers is missing)."""

    name = "torch reference"

    def __init__(self):
        import torch

        sys.path.insert(0, str(Path(__file__).parents[1] / "plugins" / "fw_zoo" / "tests"))
        from zoo_torch_llama import TorchLlama

        from fw_zoo import smollm2
        from fw_zoo.gguf_weights import GGUFFile
        from fw_zoo.llama import LlamaConfig

        torch.set_num_threads(THREADS)
        gguf = GGUFFile(smollm2.gguf_path())
        weights = gguf.tensors()
        self.torch = torch
        self.model = TorchLlama(weights, LlamaConfig.from_gguf(gguf.metadata,
                                                                "lm_head.weight" not in weights))

    def run(self, ids: list[int], new_tokens: int) -> tuple[float, float, list[int]]:
        cache: list = []
        start = time.perf_counter()
        logits = self.model.logits(self.torch.tensor([ids]), cache)
        out = [int(logits[0, -1].argmax())]
        prefill = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(new_tokens - 1):
            logits = self.model.logits(self.torch.tensor([[out[-1]]]), cache)
            out.append(int(logits[0, -1].argmax()))
        return prefill, time.perf_counter() - start, out


def other_side():
    try:
        import transformers  # noqa: F401
    except ImportError:
        return TorchReferenceSide()
    return TransformersSide()


# -- the runs -------------------------------------------------------------------------------------
SIDES = {"fw": lambda: FwSide(compiled=True), "torch": other_side}


def worker(side: str) -> None:
    """Serve one side on stdin/stdout: ``run <compiled|eager> <ids,...> <new tokens>`` answers
    a JSON line (prefill s, decode s, tokens), ``rss`` the peak RSS in MiB, ``quit`` ends."""
    runner = SIDES[side]()
    print(json.dumps({"name": runner.name, "weight_bytes": getattr(runner, "weight_bytes", 0)}),
          flush=True)
    for line in sys.stdin:
        command, *rest = line.split()
        if command == "quit":
            return
        if command == "rss":
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(json.dumps({"peak_rss_MiB": round(peak)}), flush=True)
            continue
        mode, ids, new_tokens = rest
        runner.compiled = mode == "compiled"
        prefill, decode, out = runner.run([int(i) for i in ids.split(",")], int(new_tokens))
        print(json.dumps({"prefill_s": prefill, "decode_s": decode, "tokens": out}), flush=True)


class Worker:
    """The parent's end of a :func:`worker` process."""

    def __init__(self, side: str):
        self.process = subprocess.Popen([sys.executable, "-m", "benchmarks.llm", "worker",
                                         "--side", side], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        self.info = self._read()

    def _read(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the benchmark worker {self.process.args} died")
        return json.loads(line)

    def ask(self, line: str) -> dict:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return self._read()

    def close(self) -> None:
        self.process.stdin.write("quit\n")
        self.process.stdin.close()
        self.process.wait()


def compare(rounds: int, prompt_tokens: int, new_tokens: int) -> dict:
    """Alternating rounds of every side; medians of prefill and decode tokens/s."""
    fw_side, other = Worker("fw"), Worker("torch")
    contenders = [("fw compiled", fw_side, "compiled"), ("fw eager", fw_side, "eager"),
                  (other.info["name"], other, "eager")]
    ids = ",".join(map(str, prompt_ids(_tokenizer(), prompt_tokens)))
    for _, w, mode in contenders:  # warm-up at the timed cache size: the plan is built here
        w.ask(f"run {mode} {ids} {new_tokens}")
    timings: dict[str, list] = {name: [] for name, _, _ in contenders}
    tokens, bandwidth = {}, []
    for r in range(rounds):
        bandwidth.append(copy_bandwidth())
        for name, w, mode in contenders:
            got = w.ask(f"run {mode} {ids} {new_tokens}")
            timings[name].append((prompt_tokens / got["prefill_s"],
                                  (new_tokens - 1) / got["decode_s"]))
            tokens[name] = got["tokens"]
            print(f"round {r + 1}/{rounds} {name}: prefill {timings[name][-1][0]:.0f} tok/s, "
                  f"decode {timings[name][-1][1]:.1f} tok/s", file=sys.stderr, flush=True)
    copy = statistics.median(bandwidth)
    weight_bytes = fw_side.info["weight_bytes"]
    result = {"prompt_tokens": prompt_tokens, "new_tokens": new_tokens, "rounds": rounds,
              "threads": THREADS, "copy_GBps": round(copy, 1),
              "env": {k: os.environ.get(k) for k in ("OMP_WAIT_POLICY", "OPENBLAS_NUM_THREADS")},
              "weight_MB": round(weight_bytes / 1e6),
              "same_tokens": len({tuple(t) for t in tokens.values()}) == 1, "sides": {},
              "peak_rss_MiB": {"fw": fw_side.ask("rss")["peak_rss_MiB"],
                               other.info["name"]: other.ask("rss")["peak_rss_MiB"]}}
    for w in (fw_side, other):
        w.close()
    for name, runs in timings.items():
        prefill = statistics.median(r[0] for r in runs)
        decode = statistics.median(r[1] for r in runs)
        gbps = weight_bytes * decode / 1e9
        result["sides"][name] = {"prefill_tok_s": round(prefill, 1),
                                 "decode_tok_s": round(decode, 2),
                                 "decode_GBps": round(gbps, 1),
                                 "decode_fraction_of_copy": round(gbps / copy, 3)}
    base = timings[contenders[-1][0]]
    for name in ("fw compiled", "fw eager"):
        # the median of per-round ratios: a slow spell of the machine hits both sides of one
        for what, i in (("prefill_vs_other", 0), ("decode_vs_other", 1)):
            ratios = [mine[i] / theirs[i] for mine, theirs in zip(timings[name], base)]
            result["sides"][name][what] = round(statistics.median(ratios), 2)
    return result


def _tokenizer():
    from fw_zoo import smollm2
    from fw_zoo.gguf_weights import GGUFFile
    from fw_zoo.llama_tokenizer import LlamaTokenizer

    return LlamaTokenizer(GGUFFile(smollm2.gguf_path()).metadata)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="?", default="compare", choices=("compare", "worker"))
    parser.add_argument("--side", default="fw", choices=tuple(SIDES))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--prompt-tokens", type=int, default=64)
    parser.add_argument("--new-tokens", type=int, default=128)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.what == "worker":
        worker(args.side)
        return
    text = json.dumps(compare(args.rounds, args.prompt_tokens, args.new_tokens), indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
