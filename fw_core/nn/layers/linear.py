"""Linear layers: Identity, Linear (x W^T + b) and Bilinear (x1^T W x2 + b)."""

from __future__ import annotations

__all__ = ["Bilinear", "Identity", "Linear"]

import math

from ..._state import state
from ...errors import ShapeError
from ...ops.linalg import linear
from ...ops.meta import describe
from .. import functional as F
from .. import init
from ..module import Module
from ._check import check_features, check_size
from ._params import reset_fan_in_uniform, weight_and_bias


class Identity(Module):
    """Returns its input unchanged (a placeholder that keeps a model's structure).

    Any constructor arguments are ignored, as in PyTorch.
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        return x


class Linear(Module):
    """y = x W^T + b.

    Args:
        in_features: size of each input sample (the last dimension).
        out_features: size of each output sample.
        bias: learn an additive bias.

    Shape: (*, in_features) -> (*, out_features).

    Parameters: ``weight`` (out_features, in_features) and ``bias`` (out_features), both
    initialised from U(-1/sqrt(in_features), 1/sqrt(in_features)) as PyTorch
    (``kaiming_uniform_(a=sqrt(5))`` for the weight).

    Raises:
        ShapeError: in forward, when the input's last dimension is not in_features.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        shown = {"in_features": in_features, "out_features": out_features}
        self.in_features = check_size("Linear", "in_features", in_features, least=0, **shown)
        self.out_features = check_size("Linear", "out_features", out_features, least=0, **shown)
        weight_and_bias(self, (out_features, in_features), out_features, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default initialisation."""
        reset_fan_in_uniform(self.weight, self.bias)

    def forward(self, x):
        shape = getattr(x, "shape", None)
        if not shape or shape[-1] != self.in_features:
            check_features("Linear", x, self.in_features)
        return linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """y_k = x1^T W_k x2 + b_k.

    Shape: (*, in1_features), (*, in2_features) -> (*, out_features) (the leading dimensions
    must match). Parameters ``weight`` (out_features, in1_features, in2_features) and ``bias``
    (out_features), both from U(-1/sqrt(in1_features), 1/sqrt(in1_features)) as PyTorch.
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        shown = {"in1_features": in1_features, "in2_features": in2_features,
                 "out_features": out_features}
        self.in1_features = check_size("Bilinear", "in1_features", in1_features, **shown)
        self.in2_features = check_size("Bilinear", "in2_features", in2_features, **shown)
        self.out_features = check_size("Bilinear", "out_features", out_features, least=0,
                                       **shown)
        weight_and_bias(self, (out_features, in1_features, in2_features), out_features, bias,
                        device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        check_features("Bilinear", input1, self.in1_features, "in1_features")
        check_features("Bilinear", input2, self.in2_features, "in2_features")
        if input1.shape[:-1] != input2.shape[:-1]:
            raise ShapeError(f"the inputs' leading dimensions differ: {tuple(input1.shape)} and "
                             f"{tuple(input2.shape)}", op="Bilinear",
                             module=state.module_path or None,
                             inputs=describe((input1, input2)),
                             hint="pass two batches of the same size")
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
