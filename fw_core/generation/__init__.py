"""Text generation with causal LMs (``fw.generation``): ``generate`` (greedy or sampled, batched
with left padding, a preallocated KV cache), HF-style logits processors to compose or extend,
streaming, and ``GenerationMixin`` giving a model ``model.generate``.

The protocol a model follows is in :mod:`fw_core.generation.generate`; :mod:`.toy` holds a
tiny one for tests and docs.
"""

from .config import GenerationConfig
from .generate import generate
from .logits_process import (
    LogitsProcessor,
    LogitsProcessorList,
    MinPLogitsWarper,
    RepetitionPenaltyLogitsProcessor,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)
from .mixin import GenerationMixin
from .streamers import TextStreamer

__all__ = ["GenerationConfig", "GenerationMixin", "LogitsProcessor", "LogitsProcessorList",
           "MinPLogitsWarper", "RepetitionPenaltyLogitsProcessor", "TemperatureLogitsWarper",
           "TextStreamer", "TopKLogitsWarper", "TopPLogitsWarper", "generate"]
