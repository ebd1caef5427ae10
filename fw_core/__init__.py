"""fw: a deep-learning framework built as a plugin platform.

``import fw_core as fw`` is the canonical import. This module only re-exports; the pieces live
in their own modules (see DESIGN.md).
"""

__version__ = "0.1.0"

from . import data, dtypes, errors, inspect, optim, plugins, random  # noqa: E402
from .hookspecs import hookimpl, hookspec  # noqa: E402
from .autograd import (  # noqa: E402
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from . import autograd  # noqa: E402
from .device import Device  # noqa: E402
from .device import available as available_devices  # noqa: E402
from .device import get as device  # noqa: E402
from .dtypes import (  # noqa: E402
    DType,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    uint8,
)
from .ops import OPS, define_op  # noqa: E402
from . import ops  # noqa: E402
from .ops.attention import *  # noqa: E402,F403
from .ops.broadcast import *  # noqa: E402,F403
from .ops.conv import *  # noqa: E402,F403
from .ops.pooling import *  # noqa: E402,F403
from .ops.resample import *  # noqa: E402,F403
from .ops.creation import *  # noqa: E402,F403
from .ops.elementwise import *  # noqa: E402,F403
from .ops.indexing import *  # noqa: E402,F403
from .ops.linalg import *  # noqa: E402,F403
from .ops.loss import *  # noqa: E402,F403
from .ops.loss_composed import *  # noqa: E402,F403
from .ops.loss_margin import *  # noqa: E402,F403
from .ops.ctc import *  # noqa: E402,F403
from .ops.nn import *  # noqa: E402,F403
from .ops.reduction import *  # noqa: E402,F403
from .ops.shape import *  # noqa: E402,F403
from .ops.transcendental import *  # noqa: E402,F403
from .ops.composed import *  # noqa: E402,F403
from .ops.distance import *  # noqa: E402,F403
from .ops.sorting import *  # noqa: E402,F403
from .ops.counting import *  # noqa: E402,F403
from .ops.linalg_composed import *  # noqa: E402,F403
from .ops.scans import *  # noqa: E402,F403
from .ops.unique import *  # noqa: E402,F403
from .ops.selection import *  # noqa: E402,F403
from .ops.index_update import *  # noqa: E402,F403
from .ops.diagonals import *  # noqa: E402,F403
from .ops.windows import *  # noqa: E402,F403
from .ops.sampling import *  # noqa: E402,F403
from .random import Generator, get_rng_state, manual_seed, set_rng_state  # noqa: E402
from .tensor import Tensor  # noqa: E402
from . import tensor_methods as _tensor_methods  # noqa: E402,F401
from . import nn, training  # noqa: E402
from . import io  # noqa: E402
from . import distributions  # noqa: E402
from . import backends, cuda, utils  # noqa: E402
from .legacy_tensors import *  # noqa: E402,F403
from .io import load, save, serializable  # noqa: E402
from .training import Model, Sequential, callbacks, metrics  # noqa: E402
from . import memory, scheduler, threads  # noqa: E402
from . import func  # noqa: E402
from .printing import get_printoptions, set_printoptions  # noqa: E402
from .switches import *  # noqa: E402,F403
from .threads import get_num_threads, set_num_threads  # noqa: E402
from .context import context  # noqa: E402
from .compile import compile, traceable  # noqa: E402,A004

half, float, double, long, int, bool = float16, float32, float64, int64, int32, bool_  # noqa: A001
short = int16

plugins.load()

# a name these modules lack raises a MissingNameError naming fw's equivalent of the PyTorch name
from . import names as _names  # noqa: E402

_names.guard(__name__, "fw")
_names.guard(nn.__name__, "nn")
_names.guard(nn.functional.__name__, "nn.functional")
_names.guard(optim.__name__, "optim")
_names.guard(utils.__name__, "utils")
_names.guard(utils.data.__name__, "utils.data")
_names.guard(cuda.__name__, "cuda")
