"""LoRA fine-tuning of SmolLM2-135M-Instruct on a few paragraphs, on the CPU, then merging.

    python examples/finetune_lora.py

Rank-8 adapters on the attention projections train (under 1% of the weights, the rest frozen);
the next-token loss on the text falls within a few steps. Merging folds the adapters into the
Linear layers, which then give the adapted model's logits with no LoRA module left.
"""

import time

import numpy as np

import fw_core as fw
import fw_zoo
from fw_core.nn.utils.lora import apply_lora, merge_lora

TEXT = """The lighthouse keeper of Saint Arlo wrote the same three lines in his log every night:
the lamp was lit at dusk, the sea was calm or it was not, and no ship was lost.

In the spring of the storm year the log grew longer. He wrote of waves that broke over the
gallery, of salt on the glass, and of a fishing boat that came in under the light at dawn.

When the keeper retired, the log went to the harbour museum. Visitors read the last page,
where the three lines stand alone again: the lamp was lit at dusk, the sea was calm, and no
ship was lost."""

fw.manual_seed(0)
model = fw_zoo.load("smollm2-135m-instruct")
ids = model.tokenizer.encode(TEXT)
length = 32  # four short windows keep a step (forward and backward) around a second
windows = fw.tensor([ids[i:i + length + 1] for i in range(0, len(ids) - length, length)][:4])
inputs, targets = windows[:, :-1], windows[:, 1:]

apply_lora(model, ["q_proj", "k_proj", "v_proj", "o_proj"], r=8, alpha=16)
trainable = [p for p in model.parameters() if p.requires_grad]
print(f"training {sum(p.numel() for p in trainable):,} of {model.num_parameters():,} weights")
optimizer = fw.optim.AdamW(trainable, lr=2e-3)

model.train()
losses = []
for step in range(8):
    start = time.perf_counter()
    optimizer.zero_grad()
    logits = model(inputs)  # (batch, length, vocabulary)
    loss = fw.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    print(f"step {step}  loss {losses[-1]:.3f}  ({time.perf_counter() - start:.1f} s)")
print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}")

model.eval()
with fw.no_grad():
    adapted = model(inputs).numpy()
    merged = merge_lora(model)
    difference = np.abs(merged(inputs).numpy() - adapted).max()
left = sum(isinstance(m, fw.nn.LoRA) for m in merged.modules())
print(f"merged: {left} LoRA modules left, largest logit difference {difference:.1e}")
