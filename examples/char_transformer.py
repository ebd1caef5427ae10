"""A character-level language model: a small causal Transformer learns Python source code
from the standard library's own files, then writes new "Python" by sampling.

    python examples/char_transformer.py [--steps 600] [--generate 400] [--temperature 0.8]

Characters are embedded, given a learned position vector, run through an
``fw.nn.TransformerEncoder`` with a causal mask (each position sees only the past) and mapped
to next-character logits. Training uses AdamW with a cosine learning-rate schedule and gradient
clipping in a plain loop; it prints the training loss, the loss on held-out text (in nats per
character; uniform guessing would be ln(vocabulary size)), then a sample. The default run
reaches a held-out loss of about 1.70 (uniform: 4.56) in about 2 minutes on two CPU cores.
"""

import argparse
import math
import os

import fw_core as fw
from fw_core import nn

MODULES = ("textwrap.py", "string.py", "fnmatch.py", "glob.py", "shlex.py", "bisect.py",
           "heapq.py", "colorsys.py", "keyword.py", "reprlib.py", "queue.py", "sched.py")


def read_corpus() -> str:
    """The source of a few standard-library modules, read from this Python's installation
    (the files that exist; every CPython ships them)."""
    folder = os.path.dirname(os.__file__)
    texts = []
    for name in MODULES:
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                texts.append(f.read())
    if not texts:
        raise SystemExit(f"no standard-library sources (.py files) found in {folder}: this "
                         "Python ships compiled modules only; use a regular CPython install")
    # printable ASCII and newlines only: a few modules hold Latin-1 letters in strings
    return "".join(c for c in "\n".join(texts) if c == "\n" or " " <= c <= "~")


class CharTransformer(nn.Module):
    """Next-character logits (N, L, vocab) for character indices (N, L), L <= block."""

    def __init__(self, vocab: int, block: int, width: int = 128, heads: int = 4,
                 layers: int = 2, dropout: float = 0.0):
        super().__init__()
        self.block = block
        self.embed = nn.Embedding(vocab, width)
        self.position = nn.Parameter(fw.randn(block, width) * 0.02)
        layer = nn.TransformerEncoderLayer(width, heads, dim_feedforward=4 * width,
                                           dropout=dropout, activation="relu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, idx):
        length = idx.shape[1]
        x = self.embed(idx) + self.position[:length]
        causal = fw.triu(fw.ones(length, length, dtype=fw.bool), diagonal=1)  # True: future
        x = self.encoder(x, mask=causal, is_causal=True)
        return self.head(self.norm(x))


def batches(data, block: int, batch: int):
    """Endless random windows: inputs data[s:s+block] and targets shifted by one."""
    offsets = fw.arange(block)[None, :]
    while True:
        starts = fw.randint(0, len(data) - block - 1, (batch, 1))
        yield data[starts + offsets], data[starts + offsets + 1]


def evaluate(model, data, block: int, windows: int = 16) -> float:
    """Mean next-character cross-entropy over ``windows`` evenly spaced windows."""
    step = max((len(data) - block - 1) // windows, 1)
    starts = fw.arange(0, windows * step, step)[:, None]
    offsets = fw.arange(block)[None, :]
    model.eval()
    with fw.no_grad():
        logits = model(data[starts + offsets])
        loss = fw.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                data[starts + offsets + 1].reshape(-1)).item()
    model.train()
    return loss


def generate(model, prompt: list[int], length: int, temperature: float) -> list[int]:
    """``length`` new characters, each drawn from softmax(logits / temperature) given the
    last ``model.block`` characters."""
    out = list(prompt)
    model.eval()
    with fw.no_grad():
        for _ in range(length):
            context = fw.tensor([out[-model.block:]])
            logits = model(context)[0, -1]
            probs = fw.softmax(logits / temperature, 0)
            # inverse-CDF sampling: the first index whose cumulative probability exceeds u
            below = (fw.cumsum(probs, 0) < fw.rand(1)).sum().item()
            out.append(min(int(below), probs.shape[0] - 1))
    return out[len(prompt):]


def main(steps: int, generate_chars: int, temperature: float, block: int = 64,
         batch: int = 32) -> str:
    fw.manual_seed(0)
    text = read_corpus()
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    data = fw.tensor([index[c] for c in text])
    cut = int(len(data) * 0.9)
    train, held_out = data[:cut], data[cut:]
    print(f"corpus: {len(text):,} characters of standard-library source, "
          f"vocabulary {len(chars)} (uniform loss {math.log(len(chars)):.2f})")

    model = CharTransformer(len(chars), block)
    optimizer = fw.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    schedule = fw.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(steps, 1))
    stream = batches(train, block, batch)
    report = max(steps // 10, 1)
    for step in range(1, steps + 1):
        x, y = next(stream)
        logits = model(x)
        loss = fw.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        fw.optim.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        if step % report == 0 or step == steps:
            print(f"step {step:5d}  loss {loss.item():.4f}")
    print(f"held-out loss {evaluate(model, held_out, block):.4f}")

    prompt = "def "
    sample = "".join(chars[i] for i in
                     generate(model, [index[c] for c in prompt], generate_chars, temperature))
    print(f"--- sample: {generate_chars} characters after {prompt!r}, "
          f"temperature {temperature} ---")
    print(prompt + sample)
    print("--- end of sample ---")
    return sample


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600, help="training steps")
    parser.add_argument("--generate", type=int, default=400, help="characters to sample")
    parser.add_argument("--temperature", type=float, default=0.8,
                        help="sampling temperature: lower is more conservative")
    args = parser.parse_args()
    main(args.steps, args.generate, args.temperature)
