"""The reference for fw_zoo's sentence encoder: BERT, mean pooling and normalisation written
directly in PyTorch, with weights read from the safetensors file by NumPy alone (not by fw's
loader), so neither fw's reader nor its ops take part."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

_DTYPES = {"F32": np.float32, "I64": np.int64}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a safetensors file: an 8-byte header length, a JSON header, the bytes."""
    raw = Path(path).read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    header.pop("__metadata__", None)
    body = memoryview(raw)[8 + length:]
    return {key: np.frombuffer(body[begin:end], dtype=_DTYPES[entry["dtype"]])
            .reshape(entry["shape"])
            for key, entry in header.items() for begin, end in [entry["data_offsets"]]}


class TorchSentenceBert:
    """all-MiniLM-L6-v2's forward as sentence-transformers computes it: token, position and
    type-0 embeddings with layer norm; each layer's self-attention with the additive
    float32-min mask on padded keys (as Hugging Face's BertModel), residual layer norms and
    exact gelu; then the mask-weighted mean of the tokens, L2-normalised."""

    def __init__(self, folder: Path):
        config = json.loads((folder / "config.json").read_text())
        self.heads = config["num_attention_heads"]
        self.layers = config["num_hidden_layers"]
        self.eps = config["layer_norm_eps"]
        self.w = {k: torch.from_numpy(v.copy())
                  for k, v in read_safetensors(folder / "model.safetensors").items()}

    def _linear(self, name: str, x):
        return F.linear(x, self.w[name + ".weight"], self.w[name + ".bias"])

    def _norm(self, name: str, x):
        return F.layer_norm(x, x.shape[-1:], self.w[name + ".weight"], self.w[name + ".bias"],
                            self.eps)

    @torch.no_grad()
    def __call__(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        ids, mask = torch.from_numpy(input_ids), torch.from_numpy(attention_mask)
        batch, seq = ids.shape
        w = self.w
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][torch.arange(seq)]
             + w["embeddings.token_type_embeddings.weight"][torch.zeros_like(ids)])
        x = self._norm("embeddings.LayerNorm", x)
        hidden = x.shape[-1]
        size = hidden // self.heads
        bias = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q, k, v = (self._linear(p + "attention.self." + n, x)
                       .view(batch, seq, self.heads, size).transpose(1, 2)
                       for n in ("query", "key", "value"))
            scores = q @ k.transpose(-1, -2) / math.sqrt(size) + bias
            context = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, seq, hidden)
            x = self._norm(p + "attention.output.LayerNorm",
                           self._linear(p + "attention.output.dense", context) + x)
            inner = F.gelu(self._linear(p + "intermediate.dense", x))
            x = self._norm(p + "output.LayerNorm", self._linear(p + "output.dense", inner) + x)
        weights = mask[..., None].float()
        pooled = (x * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        return F.normalize(pooled, p=2, dim=1).numpy()
