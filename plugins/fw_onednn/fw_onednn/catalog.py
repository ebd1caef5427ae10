"""What fw_onednn serves, told without loading oneDNN: the ops of each kernel module, what
their guards take, in words (``fw plugins --verbose``), and the fusion rules.

The plugin registers its kernels from this table at ``import fw_core``; the modules that run
them, and ``libdnnl.so`` with them, load when the first cpu tensor is made
(:func:`fw_onednn.plugin.kernel_table`). Each module's ``KERNELS`` takes its words from here.
"""

from __future__ import annotations

from fw_core.lazy import later
from fw_core.records import FusionRule, Structure

_PRODUCTS = ("float32 or bfloat16, at least set_min_work() multiply-adds, any transpose, oneDNN "
             "has a JIT kernel for the layout")
_CONV = ("float32 (the bias too), non-empty, positive strides in memory; any stride, padding, "
         "dilation, groups and output_padding oneDNN has a JIT kernel for")
_MAX_POOL = "float32, non-empty, no NaN or -inf, windows oneDNN has a JIT kernel for"
_AVG_POOL = ("float32, non-empty, no divisor_override, no count_include_pad window reaching "
             "past the padding")
_ADAPTIVE = "float32, non-empty, output size dividing the input size"
_CONTIGUOUS = "float32, C-contiguous"
_RNN = "float32, shapes that fit the op, a oneDNN primitive for the cell and shape"

#: module of fw_onednn -> {op its KERNELS serve: what the guard takes}
MODULES: dict[str, dict[str, str]] = {
    "kernels": {
        "matmul": _PRODUCTS, "bmm": _PRODUCTS, "linear": _PRODUCTS,
        "einsum": "as matmul, for two-operand equations that are one matrix product of views",
    },
    "conv": dict.fromkeys(("conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d",
                           "conv1d_weight_grad", "conv2d_weight_grad"), _CONV),
    "pooling": {
        "max_pool2d": _MAX_POOL, "max_pool2d_indices": _MAX_POOL,
        "avg_pool2d": _AVG_POOL, "avg_pool2d_backward": _AVG_POOL,
        "adaptive_avg_pool2d": _ADAPTIVE, "adaptive_avg_pool2d_backward": _ADAPTIVE,
    },
    "eltwise": {
        "relu": f"{_CONTIGUOUS}, no NaN",
        "leaky_relu": f"{_CONTIGUOUS} (no NaN when the slope is 0)",
        "elu": _CONTIGUOUS,
        "gelu": f"{_CONTIGUOUS}; approximate='none': no NaN, nothing from 2**127 up",
        "sigmoid": _CONTIGUOUS, "silu": _CONTIGUOUS, "mish": _CONTIGUOUS, "sqrt": _CONTIGUOUS,
    },
    "norms": {
        "softmax": f"{_CONTIGUOUS}, no NaN or +inf, over the last dimension",
        "layer_norm": "float32, C-contiguous input, weight and bias",
        "batch_norm": "float32, an (N, C) batch, C-contiguous (C,) statistics and affine "
                      "parameters",
    },
    "rnn": dict.fromkeys(("lstm_layer", "lstm_layer_backward", "gru_layer",
                          "gru_layer_backward", "rnn_layer", "rnn_layer_backward"), _RNN),
}

#: op -> what fw_onednn's guard for it takes
TAKES: dict[str, str] = {op: takes for ops in MODULES.values() for op, takes in ops.items()}

#: a product and its epilogue as one primitive; above fw_cpu's cpu.blas_epilogue (1) and
#: cpu.numba_pointwise (0): tried first
POST_OPS = FusionRule(name="onednn.post_ops", device="cpu",
                      structures=frozenset([Structure.ELEMENTWISE, Structure.BROADCAST,
                                            Structure.CONTRACTION]),
                      generate=later("fw_onednn.fusion", "generate"), priority=2,
                      supports=later("fw_onednn.fusion", "supports"))

#: chains of convolutions, poolings and activations in oneDNN's blocked layouts
BLOCKED_CHAIN = FusionRule(name="onednn.blocked_chain", device="cpu", chains=True,
                           structures=frozenset({Structure.CONTRACTION, Structure.REDUCTION,
                                                 Structure.ELEMENTWISE}),
                           generate=later("fw_onednn.chain", "generate"),
                           supports=later("fw_onednn.chain", "supports"))
