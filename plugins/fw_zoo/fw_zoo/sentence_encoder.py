"""Text to sentence embeddings: a tokenizer and a :class:`~fw_zoo.sentence_bert.SentenceBert`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from tokenizers import Tokenizer

import fw_core as fw
from fw_core.errors import ArgumentError, ArgumentTypeError

from .sentence_bert import SentenceBert


class SentenceEncoder:
    """A sentence-transformers model run by fw.

    Attributes:
        name: the zoo name it was loaded by.
        model: the :class:`~fw_zoo.sentence_bert.SentenceBert` module (token ids and attention
            mask in, unit-length embeddings out), which ``fw.compile`` and ``fw.export`` take.
        tokenizer: a ``tokenizers.Tokenizer`` that truncates to the model's ``max_seq_length``
            and pads each batch to its longest sentence.
    """

    def __init__(self, name: str, model: SentenceBert, tokenizer: Tokenizer):
        self.name = name
        self.model = model.eval()
        self.tokenizer = tokenizer

    @property
    def dimension(self) -> int:
        """The length of each embedding."""
        return self.model.config.hidden_size

    def tokenize(self, sentences: Sequence[str]) -> tuple[fw.Tensor, fw.Tensor]:
        """``(input_ids, attention_mask)``, both (len(sentences), longest) int64 fw tensors."""
        encodings = self.tokenizer.encode_batch(list(sentences))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        return fw.from_numpy(ids), fw.from_numpy(mask)

    def encode(self, sentences: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """The embeddings of ``sentences``: a float32 array (len(sentences), dimension) of unit
        rows, as sentence-transformers' ``encode(..., normalize_embeddings=True)`` gives.

        Sentences are batched longest first (as sentence-transformers does, so a batch holds
        little padding); the rows come back in the order given.

        Raises:
            ArgumentTypeError: ``sentences`` is a single string rather than a list of them.
            ArgumentError: ``batch_size`` is not a positive integer.
        """
        if isinstance(sentences, str):
            raise ArgumentTypeError("encode takes a list of sentences, got one string",
                                    hint=f"pass [{sentences[:30]!r}] to embed one sentence")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ArgumentError(f"batch_size must be a positive integer, got {batch_size!r}",
                                hint="pass the number of sentences to run at once, e.g. 32")
        sentences = list(sentences)
        order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))
        out = np.empty((len(sentences), self.dimension), dtype=np.float32)
        with fw.no_grad():
            for start in range(0, len(order), batch_size):
                rows = order[start:start + batch_size]
                embedded = self.model(*self.tokenize([sentences[i] for i in rows]))
                out[rows] = embedded.numpy()
        return out

    def __repr__(self) -> str:
        return f"SentenceEncoder({self.name!r}, dimension={self.dimension})"
