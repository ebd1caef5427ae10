"""Reading a LLaMA-family GGUF file (llama.cpp's format) as float32 NumPy arrays with Hugging
Face's names, and its metadata as plain Python values.

Every tensor is dequantized once, at load, with the ``gguf`` package's vectorized NumPy
routines (``gguf.quants.dequantize``), so the model computes in float32. llama.cpp's converter
reorders the rows of ``attn_q``/``attn_k`` within each head (it interleaves the two rotary
halves, for its own RoPE kernel); :func:`unpermute` puts them back, so the weights are Hugging
Face's and the model applies RoPE the Hugging Face way (``rotate_half``: the first and second
halves of each head are the pair's two components).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from fw_core.errors import CheckpointError, UnsupportedError

#: the tensor types this reader dequantizes (what SmolLM2's and most small GGUFs hold)
SUPPORTED = ("F32", "F16", "Q8_0", "Q4_1")

# GGUF tensor names (after "blk.N.") -> Hugging Face names (after "model.layers.N.")
_LAYER_NAMES = {
    "attn_norm.weight": "input_layernorm.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_output.weight": "self_attn.o_proj.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
}
_TOP_NAMES = {"token_embd.weight": "model.embed_tokens.weight",
              "output_norm.weight": "model.norm.weight",
              "output.weight": "lm_head.weight"}


class GGUFFile:
    """An opened GGUF file: ``metadata`` (key -> value) and ``tensors()`` (HF name -> float32,
    dequantized on reading).

    Raises:
        CheckpointError: the file is missing or not a GGUF file.
    """

    def __init__(self, path: Path):
        import gguf

        self.path = Path(path)
        try:
            self._reader = gguf.GGUFReader(self.path)
        except (OSError, ValueError) as err:
            raise CheckpointError(f"{self.path} cannot be read as a GGUF file: {err}",
                                  hint="reinstall the package that ships it") from None
        self.metadata = {key: _value(field) for key, field in self._reader.fields.items()
                         if not key.startswith("GGUF.")}

    def tensors(self, aliases: dict[str, str] | None = None) -> DequantizedTensors:
        """Every tensor by its Hugging Face name, dequantized to float32 when it is read (see
        :class:`DequantizedTensors`); ``aliases``: extra names for existing tensors (a tied
        ``lm_head.weight`` -> ``model.embed_tokens.weight``).

        Raises:
            CheckpointError: a tensor name this reader does not know.
        """
        heads = int(self.metadata["llama.attention.head_count"])
        kv_heads = int(self.metadata.get("llama.attention.head_count_kv", heads))
        by_name = {hf_name(t.name, self.path): t for t in self._reader.tensors}
        for alias, name in (aliases or {}).items():
            by_name[alias] = by_name[name]
        return DequantizedTensors(by_name, self.path, {"q_proj.weight": heads,
                                                       "k_proj.weight": kv_heads})


class DequantizedTensors(Mapping):
    """A read-only mapping, Hugging Face name -> float32 array, that dequantizes a tensor each
    time it is read (un-permuting attn_q/attn_k, see :func:`unpermute`) and keeps nothing: a
    model loading from it holds one dequantized tensor at a time beside its parameters, not a
    second copy of all of them.

    Raises (on reading a tensor):
        UnsupportedError: a tensor of a type outside :data:`SUPPORTED`.
    """

    def __init__(self, tensors: dict, path: Path, permuted_heads: dict[str, int]):
        self._tensors = tensors
        self._path = path
        self._heads = permuted_heads

    def __getitem__(self, name: str) -> np.ndarray:
        array = dequantize(self._tensors[name], self._path)
        heads = self._heads.get(name.rsplit(".", 2)[-2] + ".weight")
        return array if heads is None else unpermute(array, heads)

    def __contains__(self, name) -> bool:  # without dequantizing (Mapping's reads the value)
        return name in self._tensors

    def __iter__(self):
        return iter(self._tensors)

    def __len__(self) -> int:
        return len(self._tensors)


def hf_name(name: str, path: Path) -> str:
    """The Hugging Face name of GGUF tensor ``name`` (``blk.3.attn_q.weight`` ->
    ``model.layers.3.self_attn.q_proj.weight``)."""
    if name in _TOP_NAMES:
        return _TOP_NAMES[name]
    parts = name.split(".", 2)
    if len(parts) == 3 and parts[0] == "blk" and parts[2] in _LAYER_NAMES:
        return f"model.layers.{parts[1]}.{_LAYER_NAMES[parts[2]]}"
    raise CheckpointError(f"{path}: tensor {name!r} is not one of a LLaMA model's",
                          hint="only GGUF files of general.architecture 'llama' are read")


def dequantize(tensor, path: Path) -> np.ndarray:
    """A GGUF tensor as a C-contiguous, writeable float32 array (never the file's memory), in
    NumPy's (row-major) shape."""
    from gguf import quants

    kind = tensor.tensor_type.name
    if kind not in SUPPORTED:
        raise UnsupportedError(f"{path}: tensor {tensor.name} is of type {kind}",
                               hint=f"fw_zoo dequantizes {', '.join(SUPPORTED)}; convert the "
                               "file to one of those with llama.cpp's llama-quantize")
    shape = tuple(int(n) for n in reversed(tensor.shape))  # GGUF lists the fastest dim first
    array = quants.dequantize(tensor.data, tensor.tensor_type)
    # F32 tensors come back as views of the read-only memory map: copy those
    return np.require(array.reshape(shape), np.float32, ["C_CONTIGUOUS", "WRITEABLE"])


def unpermute(weight: np.ndarray, heads: int) -> np.ndarray:
    """Undo llama.cpp's q/k row order: within each head it stores the rotary pairs
    interleaved (row 2i, 2i+1 = pair i); Hugging Face stores the first halves, then the
    second halves. ``weight`` is (heads * head_dim, in_features)."""
    rows = weight.shape[0]
    half = rows // heads // 2
    return np.ascontiguousarray(
        weight.reshape(heads, half, 2, *weight.shape[1:]).swapaxes(1, 2).reshape(weight.shape))


def _value(field):
    """A metadata field's value: str, int, float, bool or a list of them."""
    value = field.contents()
    return value.tolist() if isinstance(value, np.ndarray) else value
