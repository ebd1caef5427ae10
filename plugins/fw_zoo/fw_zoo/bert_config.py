"""The sizes of a BERT encoder, read from a Hugging Face ``config.json``.

Only the architecture fw_zoo builds is accepted (:mod:`.bert`: absolute positions, exact gelu);
a config asking for anything else is refused here, where the file is visible, rather than
giving a model that silently computes something different.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from fw_core.errors import UnsupportedError


@dataclass(frozen=True)
class BertConfig:
    """The hyperparameters of :class:`~fw_zoo.bert.BertModel`, with Hugging Face's names."""

    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int
    type_vocab_size: int
    layer_norm_eps: float
    pad_token_id: int

    @property
    def head_size(self) -> int:
        """Features per attention head."""
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_json(cls, path: Path) -> BertConfig:
        """The config in the ``config.json`` at ``path``.

        Raises:
            UnsupportedError: the file describes something other than a BERT encoder with
                absolute position embeddings and exact (erf) gelu, or its hidden size is not a
                multiple of its number of heads.
        """
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        wanted = {"model_type": "bert", "hidden_act": "gelu",
                  "position_embedding_type": "absolute"}
        for key, value in wanted.items():
            if raw.get(key, value) != value:
                raise UnsupportedError(
                    f"{path}: {key} is {raw[key]!r}; fw_zoo's BERT implements only {value!r}",
                    hint="use a checkpoint of that architecture")
        config = cls(**{name: raw[name] for name in cls.__dataclass_fields__})
        if config.hidden_size % config.num_attention_heads:
            raise UnsupportedError(
                f"{path}: hidden_size {config.hidden_size} is not a multiple of "
                f"num_attention_heads {config.num_attention_heads}",
                hint="the file is damaged or not a BERT config")
        return config
