"""Activation layers: modules around the elementwise activations and (log-)softmax.

Each keeps its input's shape, ``(*) -> (*)``. ``inplace=True`` is accepted as in PyTorch (see
:mod:`fw_core.nn.functional` for what it does in fw).
"""

from __future__ import annotations

__all__ = ["CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
           "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "PReLU", "ReLU", "ReLU6", "SELU",
           "SiLU", "Sigmoid", "Softmax", "Softmin", "Softplus", "Softshrink", "Softsign", "Tanh",
           "Tanhshrink", "Threshold"]

from ...ops.meta import argument_error
from .. import functional as F
from ..module import Module
from ._check import check_choice


class _Inplace(Module):
    """An activation with only an ``inplace`` flag."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    """max(x, 0), elementwise. Shape: (*) -> (*)."""

    def forward(self, x):
        return F.relu(x, self.inplace)


class ReLU6(_Inplace):
    """min(max(x, 0), 6), elementwise. Shape: (*) -> (*)."""

    def forward(self, x):
        return F.relu6(x, self.inplace)


class SiLU(_Inplace):
    """x * sigmoid(x) (swish). Shape: (*) -> (*)."""

    def forward(self, x):
        return F.silu(x, self.inplace)


class Mish(_Inplace):
    """x * tanh(softplus(x)). Shape: (*) -> (*)."""

    def forward(self, x):
        return F.mish(x, self.inplace)


class LeakyReLU(Module):
    """x for x > 0, ``negative_slope * x`` otherwise. Shape: (*) -> (*)."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, x):
        return F.leaky_relu(x, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                          else "")


class ELU(Module):
    """x for x > 0, ``alpha * (exp(x) - 1)`` otherwise. Shape: (*) -> (*)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, x):
        return F.elu(x, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    """x * Phi(x) (Phi: the standard normal CDF); ``approximate="tanh"`` for the tanh form.
    Shape: (*) -> (*)."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = check_choice("GELU", "approximate", approximate, ("none", "tanh"))

    def forward(self, x):
        return F.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    """log(1 + exp(beta x)) / beta, linear where beta x > threshold. Shape: (*) -> (*)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x):
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """x clipped to [min_val, max_val]. Shape: (*) -> (*)."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
        super().__init__()
        if not max_val > min_val:
            raise argument_error("Hardtanh", f"max_val ({max_val}) must be greater than "
                                 f"min_val ({min_val})", "pass min_val < max_val, e.g. "
                                 "Hardtanh(-1.0, 1.0)", min_val=min_val, max_val=max_val)
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, x):
        return F.hardtanh(x, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else "")


class Sigmoid(Module):
    """1 / (1 + exp(-x)). Shape: (*) -> (*)."""

    def forward(self, x):
        return F.sigmoid(x)


class Tanh(Module):
    """Hyperbolic tangent. Shape: (*) -> (*)."""

    def forward(self, x):
        return F.tanh(x)


class Softmax(Module):
    """Probabilities along ``dim`` (they sum to 1 there). Shape: (*) -> (*).

    ``dim=None`` picks PyTorch's legacy dimension with a warning; pass ``dim``.
    """

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.softmax(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """Log-probabilities along ``dim`` (log(softmax(x)), computed stably). Shape: (*) -> (*)."""

    def forward(self, x):
        return F.log_softmax(x, self.dim)


class Hardsigmoid(_Inplace):
    """relu6(x + 3) / 6. Shape: (*) -> (*)."""

    def forward(self, x):
        return F.hardsigmoid(x, self.inplace)


class Hardswish(_Inplace):
    """x * hardsigmoid(x). Shape: (*) -> (*)."""

    def forward(self, x):
        return F.hardswish(x, self.inplace)


class SELU(_Inplace):
    """scale * elu(x, alpha), self-normalising. Shape: (*) -> (*)."""

    def forward(self, x):
        return F.selu(x, self.inplace)


class CELU(Module):
    """x for x > 0, ``alpha * (exp(x / alpha) - 1)`` otherwise. Shape: (*) -> (*)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, x):
        return F.celu(x, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class _Elementwise(Module):
    """An activation with no settings."""

    function = None  # the functional form, set by each subclass

    def forward(self, x):
        return type(self).function(x)


class Softsign(_Elementwise):
    """x / (1 + |x|). Shape: (*) -> (*)."""

    function = staticmethod(F.softsign)


class LogSigmoid(_Elementwise):
    """log(sigmoid(x)). Shape: (*) -> (*)."""

    function = staticmethod(F.logsigmoid)


class Tanhshrink(_Elementwise):
    """x - tanh(x). Shape: (*) -> (*)."""

    function = staticmethod(F.tanhshrink)


class Softshrink(Module):
    """x - lambd above lambd, x + lambd below -lambd, 0 between. Shape: (*) -> (*)."""

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, x):
        return F.softshrink(x, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    """x where |x| > lambd, 0 elsewhere. Shape: (*) -> (*)."""

    def forward(self, x):
        return F.hardshrink(x, self.lambd)


class Threshold(Module):
    """x where x > threshold, ``value`` elsewhere. Shape: (*) -> (*)."""

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, x):
        return F.threshold(x, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else "")


class GLU(Module):
    """a * sigmoid(b) over the halves of ``dim``. Shape: (*, 2n, *) -> (*, n, *)."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.glu(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """x for x >= 0, ``weight * x`` otherwise, with a learned slope (one, or one per channel:
    ``num_parameters``), initialised to ``init``. Shape: (N, C, *) -> (N, C, *)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        from ...ops.creation import full
        from ..parameter import Parameter

        # not kept as an attribute (PyTorch's name): fw's Module.num_parameters() counts the
        # slopes, which is the same number
        self.weight = Parameter(full((num_parameters,), init, dtype=dtype, device=device))

    def forward(self, x):
        return F.prelu(x, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.weight.numel()}"


class Softmin(Softmax):
    """softmax(-x) along ``dim``. Shape: (*) -> (*)."""

    def forward(self, x):
        return F.softmin(x, self.dim)
