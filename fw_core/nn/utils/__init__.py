"""Helpers around layers and training, at PyTorch's address (``torch.nn.utils``): gradient
clipping, packed variable-length sequences (:mod:`.rnn`), flattening parameters into one
vector, parametrizations, the weight-norm / spectral-norm reparametrisations, LoRA
fine-tuning (:mod:`.lora`) and building a module without initialising it (``skip_init``).

The clipping functions live in :mod:`fw_core.optim.clip` (``fw.optim.clip_grad_norm_`` is the
same function).
"""

from __future__ import annotations

__all__ = ["clip_grad_norm_", "clip_grad_value_", "lora", "parameters_to_vector",
           "parametrizations", "parametrize", "remove_spectral_norm", "remove_weight_norm",
           "rnn", "skip_init", "spectral_norm", "vector_to_parameters", "weight_norm"]

from ...optim.clip import clip_grad_norm_, clip_grad_value_
from . import lora, parametrizations, parametrize, rnn
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .init_skipping import skip_init
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm
