"""``GenerationMixin``: gives a causal-LM module ``model.generate(...)``, as HF's mixin does."""

from __future__ import annotations

__all__ = ["GenerationMixin"]

from .generate import generate


class GenerationMixin:
    """Inherit it (before ``fw.nn.Module``) to get ``model.generate(input_ids, ...)``.

    The class must follow fw's causal-LM protocol (``config``, ``new_cache``, a forward taking
    ``cache=``, ``attention_mask=``, ``position_ids=``); see :func:`fw.generation.generate`
    for the arguments."""

    def generate(self, input_ids, attention_mask=None, **kwargs):
        """:func:`fw.generation.generate` with this model; returns the (B, T + n) int64 ids."""
        return generate(self, input_ids, attention_mask, **kwargs)
