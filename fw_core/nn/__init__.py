"""fw.nn: modules, layers, parameter initialisation and the functional forms.

>>> import fw_core as fw
>>> net = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
>>> fw.nn.summary(net, (1, 4))

Layers live in ``fw_core/nn/layers/`` by family; their parameter names, shapes and default
initialisation follow PyTorch, so ``model.load_state_dict(torch_state_dict)`` carries weights
over.
"""

from . import functional, init, utils
from .layers import *  # noqa: F403
from .layers import __all__ as _layers
from .module import Module
from .parameter import Parameter
from .summary import summary

__all__ = ["Module", "Parameter", "functional", "init", "summary", "utils", *_layers]

# a name this module lacks raises a MissingNameError naming fw's equivalent, if any
from ..names import guard as _guard  # noqa: E402

_guard(__name__, "nn")
