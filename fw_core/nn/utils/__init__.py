"""Helpers around a training step, at PyTorch's address (``torch.nn.utils``): gradient clipping.

The implementations live in :mod:`fw_core.optim.clip` (``fw.optim.clip_grad_norm_`` is the same
function).
"""

from __future__ import annotations

__all__ = ["clip_grad_norm_", "clip_grad_value_"]

from ..optim.clip import clip_grad_norm_, clip_grad_value_
