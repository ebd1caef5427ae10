"""Generation settings and where their defaults come from, as HF transformers takes them: an
argument given to ``generate`` wins, then ``model.generation_config``, then the token ids of
``model.config``, then HF's defaults (greedy; when sampling, temperature 1, top-k 50, top-p 1).
"""

from __future__ import annotations

__all__ = ["GenerationConfig", "resolve"]

from dataclasses import dataclass, fields, replace


@dataclass
class GenerationConfig:
    """The settings of one ``generate`` call (HF's field names and defaults).

    ``max_new_tokens`` defaults to 20 new tokens (HF's default caps the *total* length at 20,
    which silently generates nothing for a long prompt). ``top_k=0``, ``top_p=1.0``,
    ``min_p=None`` and ``repetition_penalty=1.0`` switch those steps off.
    """

    max_new_tokens: int = 20
    do_sample: bool = False
    temperature: float = 1.0
    top_k: int = 50
    top_p: float = 1.0
    min_p: float | None = None
    repetition_penalty: float = 1.0
    eos_token_id: int | list[int] | None = None
    pad_token_id: int | None = None


_TOKEN_IDS = ("eos_token_id", "pad_token_id")


def _set_fields(source) -> dict:
    """The non-None GenerationConfig fields found on ``source`` (an object or a dict)."""
    if source is None:
        return {}
    get = source.get if isinstance(source, dict) else lambda name: getattr(source, name, None)
    found = {f.name: get(f.name) for f in fields(GenerationConfig)}
    return {name: value for name, value in found.items() if value is not None}


def resolve(model, given: dict) -> GenerationConfig:
    """The settings for ``generate(model, **given)``: ``given``'s non-None values over
    ``model.generation_config`` over ``model.config``'s token ids over the defaults."""
    from_config = {name: value for name, value in _set_fields(getattr(model, "config", None))
                   .items() if name in _TOKEN_IDS}
    layers = (from_config, _set_fields(getattr(model, "generation_config", None)),
              {name: value for name, value in given.items() if value is not None})
    config = GenerationConfig()
    for layer in layers:
        config = replace(config, **layer)
    return config
