"""fw.optim: optimizers, learning-rate schedulers and gradient clipping.

Each optimizer matches its ``torch.optim`` namesake step for step; see :class:`Optimizer` for
what they share (parameter groups, state, state dicts).

>>> opt = fw.optim.AdamW(model.parameters(), lr=1e-3)
>>> sched = fw.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100)
>>> loss.backward()
>>> fw.optim.clip_grad_norm_(model.parameters(), max_norm=1.0)
>>> opt.step(); opt.zero_grad(); sched.step()
"""

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .clip import NonFiniteError, clip_grad_norm_, clip_grad_value_
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import ArgumentError, Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["ASGD", "LBFGS", "SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax",
           "ArgumentError", "NAdam", "NonFiniteError", "Optimizer", "RAdam", "RMSprop", "Rprop",
           "clip_grad_norm_", "clip_grad_value_", "lr_scheduler"]

# a name this module lacks raises a MissingNameError naming fw's equivalent, if any
from ..names import guard as _guard  # noqa: E402

_guard(__name__, "optim")
