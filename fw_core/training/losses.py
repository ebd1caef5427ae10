"""Loss functions by the names ``Model.compile(loss=...)`` accepts."""

from __future__ import annotations

from ..errors import FwError

_ALIASES = {
    "cross_entropy": "cross_entropy", "sparse_categorical_crossentropy": "cross_entropy",
    "categorical_crossentropy": "cross_entropy", "nll": "nll_loss", "nll_loss": "nll_loss",
    "mse": "mse_loss", "mean_squared_error": "mse_loss", "mse_loss": "mse_loss",
    "mae": "l1_loss", "l1": "l1_loss", "mean_absolute_error": "l1_loss", "l1_loss": "l1_loss",
    "smooth_l1": "smooth_l1_loss", "huber": "smooth_l1_loss", "smooth_l1_loss": "smooth_l1_loss",
    "bce": "binary_cross_entropy", "binary_crossentropy": "binary_cross_entropy",
    "binary_cross_entropy": "binary_cross_entropy",
    "bce_with_logits": "binary_cross_entropy_with_logits",
    "binary_cross_entropy_with_logits": "binary_cross_entropy_with_logits",
    "kl_div": "kl_div", "kld": "kl_div",
}


def get(loss):
    """A loss function ``loss(output, target) -> Tensor`` from a name or a callable."""
    if callable(loss):
        return loss
    if isinstance(loss, str) and loss.lower() in _ALIASES:
        from ..nn import functional

        return getattr(functional, _ALIASES[loss.lower()])
    raise FwError(f"unknown loss {loss!r}",
                  hint=f"use one of {', '.join(sorted(_ALIASES))} or a function "
                  "loss(output, target)")
