"""Define-by-run autograd: recorded nodes, backward, ``grad``, grad modes, gradcheck and
user-defined ``Function``s."""

from . import functional
from .engine import backward, grad, register_post_accumulate_grad_hook
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import gradcheck, gradgradcheck
from .node import Node

__all__ = ["Function", "FunctionCtx", "Node", "backward", "enable_grad", "functional", "grad",
           "gradcheck", "gradgradcheck", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "no_grad",
           "once_differentiable", "register_post_accumulate_grad_hook", "set_grad_enabled"]
