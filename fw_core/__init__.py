"""fw: a deep-learning framework built as a plugin platform.

``import fw_core as fw`` is the canonical import. This module only re-exports; the pieces live
in their own modules (see DESIGN.md).
"""

__version__ = "0.1.0"

from . import dtypes, errors, inspectors, plugins, random  # noqa: E402
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
    bfloat16,
    bool_,
    float16,
    float32,
    finfo,
    float64,
    iinfo,
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
from .ops.cross_entropy import *  # noqa: E402,F403
from .ops.loss import *  # noqa: E402,F403
from .ops.loss_composed import *  # noqa: E402,F403
from .ops.loss_margin import *  # noqa: E402,F403
from .ops.ctc import *  # noqa: E402,F403
from .ops.nn import *  # noqa: E402,F403
from .ops.normalization import *  # noqa: E402,F403
from .ops.reduction import *  # noqa: E402,F403
from .ops.rearrange import *  # noqa: E402,F403
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
from .legacy_tensors import *  # noqa: E402,F403
from . import threads  # noqa: E402
from .printing import get_printoptions, set_printoptions  # noqa: E402
from .switches import *  # noqa: E402,F403
from .threads import get_num_threads, set_num_threads  # noqa: E402

half, float, double, long, int, bool = float16, float32, float64, int64, int32, bool_  # noqa: A001
short = int16

plugins.load()

# The layers, optimisers, data, saving, training and compiling APIs load on first use (``fw.nn``
# imports fw_core.nn): ``import fw_core`` stays the tensor library and its plugins. A name fw
# lacks raises a MissingNameError naming fw's equivalent of the PyTorch name.
from . import names as _names  # noqa: E402
from .lazy import lazy_api as _lazy_api  # noqa: E402

_lazy_api(__name__, {
    "Model": "training", "Sequential": "training", "callbacks": "training",
    "metrics": "training", "load": "io", "save": "io", "serializable": "io",
    "compile": "compile", "traceable": "compile", "context": "context",
    "export": "export"},
    submodules=("backends", "cuda", "data", "distributions", "func", "generation", "io",
                "memory", "nn", "optim", "scheduler", "training", "utils"),
    missing=lambda name: _names.missing("fw", name), export=False)
