"""LoRA (Hu et al., 2021): a frozen Linear plus a trainable low-rank update,
``y = base(x) + (alpha / r) * B(A(dropout(x)))``, as PEFT's ``lora.Linear``.

Only the adapter (``r * (in_features + out_features)`` numbers) trains, so fine-tuning a large
model needs gradients and optimizer state for a small fraction of its weights. The names
follow PEFT (``base_layer``, ``lora_A``, ``lora_B``, ``lora_dropout``), so an adapter's
state-dict keys read ``<path>.lora_A.weight`` as in a PEFT adapter file.
"""

from __future__ import annotations

__all__ = ["LoRA"]

import math

from ...autograd import no_grad
from ...errors import ArgumentTypeError, InvalidArgumentError
from ...ops.meta import argument_error
from .. import init
from ..module import Module
from ._check import check_range, check_size
from .dropout import Dropout
from .linear import Identity, Linear


class LoRA(Module):
    """A low-rank adapter around a :class:`Linear`: ``base(x) + (alpha / r) * x A^T B^T``,
    with dropout on the adapter's input only.

    Args:
        base_layer: the Linear to adapt; its ``weight`` and ``bias`` are frozen
            (``requires_grad=False``) in place.
        r: the adapter's rank (>= 1).
        alpha: the scale numerator: the update is multiplied by ``alpha / r``, so changing
            ``r`` keeps the update's size about the same.
        dropout: the probability of zeroing an element of the adapter's input while training.

    Parameters: ``lora_A.weight`` (r, in_features), Kaiming-uniform as PEFT
    (``kaiming_uniform_(a=sqrt(5))``), and ``lora_B.weight`` (out_features, r), zeros, so a
    new adapter leaves the layer's output unchanged.

    :meth:`merge` folds the update into ``base_layer.weight`` (forward is then the base alone,
    as fast as the plain Linear); :meth:`unmerge` takes it out again. ``merged`` says which.

    >>> layer = fw.nn.LoRA(fw.nn.Linear(16, 8), r=4, alpha=8)
    >>> [name for name, p in layer.named_parameters() if p.requires_grad]
    ['lora_A.weight', 'lora_B.weight']

    Raises:
        ArgumentTypeError: ``base_layer`` is not a Linear.
        ArgumentError: ``r`` < 1, ``alpha`` not a number, ``dropout`` outside [0, 1).
    """

    def __init__(self, base_layer: Linear, r: int = 8, alpha: float = 16,
                 dropout: float = 0.0):
        super().__init__()
        if not isinstance(base_layer, Linear):
            raise argument_error(
                "LoRA", f"base_layer must be an fw.nn.Linear, got {type(base_layer).__name__}",
                "wrap a Linear layer (LoRA adapts the weight matrix of x W^T + b)",
                error=ArgumentTypeError, base_layer=type(base_layer).__name__)
        shown = {"r": r, "alpha": alpha, "dropout": dropout}
        self.r = check_size("LoRA", "r", r, **shown)
        self.alpha = check_range("LoRA", "alpha", alpha, -math.inf,
                                 hint="pass a number, e.g. alpha=16 (often 2 * r)", **shown)
        self.scaling = alpha / self.r
        check_range("LoRA", "dropout", dropout, 0.0, 1.0, high_open=True, **shown)
        base_layer.requires_grad_(False)
        self.base_layer = base_layer
        weight = base_layer.weight
        like = {"bias": False, "device": weight.device, "dtype": weight.dtype}
        self.lora_A = Linear(base_layer.in_features, self.r, **like)
        self.lora_B = Linear(self.r, base_layer.out_features, **like)
        self.lora_dropout = Dropout(dropout) if dropout > 0 else Identity()
        self.merged = False
        self.reset_parameters()

    @property
    def in_features(self) -> int:
        return self.base_layer.in_features

    @property
    def out_features(self) -> int:
        return self.base_layer.out_features

    def reset_parameters(self) -> None:
        """PEFT's default: A Kaiming-uniform, B zeros (the update starts at zero)."""
        init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
        init.zeros_(self.lora_B.weight)

    def delta_weight(self):
        """The update the adapter adds to the base weight: (alpha / r) * B A, (out, in)."""
        return (self.lora_B.weight @ self.lora_A.weight) * self.scaling

    def forward(self, x):
        out = self.base_layer(x)
        if self.merged:
            return out
        return out + self.lora_B(self.lora_A(self.lora_dropout(x))) * self.scaling

    def merge(self) -> LoRA:
        """Add the update into ``base_layer.weight`` (in place: the Parameter keeps its
        identity). Dropout no longer applies to the adapter's input; the results equal
        the unmerged layer's in evaluation mode, to rounding.

        Raises:
            InvalidArgumentError: the adapter is merged already (merging twice would add the
                update twice).
        """
        self._expect_merged(False, "merge")
        with no_grad():
            self.base_layer.weight.add_(self.delta_weight())
        self.merged = True
        return self

    def unmerge(self) -> LoRA:
        """Subtract the update from ``base_layer.weight`` again, back to separate adapter
        and base.

        Raises:
            InvalidArgumentError: the adapter is not merged.
        """
        self._expect_merged(True, "unmerge")
        with no_grad():
            self.base_layer.weight.sub_(self.delta_weight())
        self.merged = False
        return self

    def _expect_merged(self, merged: bool, op: str) -> None:
        if self.merged != merged:
            state = "merged already" if self.merged else "not merged"
            raise InvalidArgumentError(
                f"the adapter is {state}", op=f"LoRA.{op}", module=self.path or None,
                hint="check layer.merged first" if merged else
                "call unmerge() before merging again, or leave it merged")

    def extra_repr(self) -> str:
        return f"r={self.r}, alpha={self.alpha}, merged={self.merged}"
