"""EfficientNet-lite0 in fw: the network of Google's EfficientNet-Lite (Tan & Le, 2019, its
mobile variant), as ``efficientnet_lite_pytorch`` builds it.

Lite differs from EfficientNet-B0 where quantised mobile runtimes need it: ReLU6 instead of
swish, no squeeze-and-excitation, and a stem and head kept at 32 and 1280 channels. The body is
16 MBConv blocks (1x1 expansion, depthwise k x k convolution, 1x1 projection, each with batch
norm; a residual where the shape allows), in the 7 stages of :data:`STAGES`.

Convolutions pad as TensorFlow's "SAME", where the weights were trained: the output is
ceil(size / stride) and an odd padding puts the extra row and column at the bottom and right.
The padding is worked out from each input's size, so any resolution runs (at 224 x 224 it is
the padding ``efficientnet_lite_pytorch`` fixes when it builds the network).

Module names are the checkpoint's without their leading underscores (``blocks.3.expand_conv``
holds ``_blocks.3._expand_conv.weight``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import fw_core as fw
from fw_core import nn
from fw_core.nn import functional as F

# batch-norm settings of the TensorFlow original: its momentum 0.99 is PyTorch's 0.01
_BN = {"eps": 1e-3, "momentum": 0.01}


class Stage(NamedTuple):
    """``repeats`` MBConv blocks; the first has ``stride`` and maps ``inputs`` to ``outputs``
    channels, the rest keep ``outputs`` at stride 1."""

    repeats: int
    kernel: int
    stride: int
    expand: int
    inputs: int
    outputs: int


#: EfficientNet-lite0's body (the official ``efficientnet_lite_builder``'s block strings)
STAGES = (
    Stage(1, 3, 1, 1, 32, 16),
    Stage(2, 3, 2, 6, 16, 24),
    Stage(2, 5, 2, 6, 24, 40),
    Stage(3, 3, 2, 6, 40, 80),
    Stage(3, 5, 1, 6, 80, 112),
    Stage(4, 5, 2, 6, 112, 192),
    Stage(1, 3, 1, 6, 192, 320),
)


def block_settings() -> list[tuple[int, int, int, int, int]]:
    """(kernel, stride, expand, inputs, outputs) of each MBConv block, stage by stage: a
    stage's first block has its stride and input channels, the others stride 1 from its
    output channels."""
    blocks = []
    for stage in STAGES:
        for i in range(stage.repeats):
            first = i == 0
            blocks.append((stage.kernel, stage.stride if first else 1, stage.expand,
                           stage.inputs if first else stage.outputs, stage.outputs))
    return blocks


class SameConv2d(nn.Conv2d):
    """A bias-free Conv2d padded as TensorFlow's "SAME": output size ceil(size / stride), the
    odd element of the padding after, not before (PyTorch's ``padding="same"`` has no
    strides)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 groups: int = 1):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding=0,
                         groups=groups, bias=False)

    def forward(self, x):
        pads = []
        for size, k, s in zip(reversed(x.shape[-2:]), reversed(self.kernel_size),
                              reversed(self.stride)):
            total = max((math.ceil(size / s) - 1) * s + k - size, 0)
            pads += [total // 2, total - total // 2]
        if any(pads):
            x = F.pad(x, pads)
        return super().forward(x)


class MBConvBlock(nn.Module):
    """Mobile inverted bottleneck: expand to ``expand`` x the channels (1x1), filter each
    channel (depthwise k x k, the block's stride), project (1x1); ReLU6 after the first two.
    Adds the input back when stride is 1 and the channels agree, dropping the branch per sample
    with probability ``drop_rate`` in training (stochastic depth, as the original)."""

    def __init__(self, kernel: int, stride: int, expand: int, inputs: int, outputs: int,
                 drop_rate: float = 0.0):
        super().__init__()
        hidden = inputs * expand
        self.expands = expand != 1
        if self.expands:
            self.expand_conv = nn.Conv2d(inputs, hidden, 1, bias=False)
            self.bn0 = nn.BatchNorm2d(hidden, **_BN)
        self.depthwise_conv = SameConv2d(hidden, hidden, kernel, stride, groups=hidden)
        self.bn1 = nn.BatchNorm2d(hidden, **_BN)
        self.project_conv = nn.Conv2d(hidden, outputs, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs, **_BN)
        self.residual = stride == 1 and inputs == outputs
        self.drop_rate = drop_rate

    def forward(self, inputs):
        x = inputs
        if self.expands:
            x = F.relu6(self.bn0(self.expand_conv(x)))
        x = F.relu6(self.bn1(self.depthwise_conv(x)))
        x = self.bn2(self.project_conv(x))
        if not self.residual:
            return x
        if self.training and self.drop_rate:
            keep = 1.0 - self.drop_rate
            kept = fw.floor(fw.rand(x.shape[0], 1, 1, 1, device=x.device) + keep)
            x = x / keep * kept
        return x + inputs


class EfficientNetLite0(nn.Module):
    """EfficientNet-lite0: (N, 3, H, W) normalised RGB -> (N, 1000) ImageNet logits.

    Stem (3x3 stride-2 convolution to 32 channels), the 16 blocks of :data:`STAGES`, head (1x1
    to 1280 channels), global average pooling, dropout 0.2, linear to 1000 classes. Block ``i``
    drops its residual branch with probability 0.2 * i / 16 in training, as the original.

    >>> model = EfficientNetLite0().eval()
    >>> model(fw.zeros(1, 3, 224, 224)).shape  # doctest: +SKIP
    (1, 1000)
    """

    def __init__(self, num_classes: int = 1000, dropout: float = 0.2,
                 drop_connect_rate: float = 0.2):
        super().__init__()
        self.conv_stem = SameConv2d(3, STAGES[0].inputs, 3, stride=2)
        self.bn0 = nn.BatchNorm2d(STAGES[0].inputs, **_BN)
        settings = block_settings()
        self.blocks = nn.ModuleList(
            MBConvBlock(*setting, drop_rate=drop_connect_rate * i / len(settings))
            for i, setting in enumerate(settings))
        self.conv_head = nn.Conv2d(STAGES[-1].outputs, 1280, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(1280, **_BN)
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(1280, num_classes)

    def forward(self, x):
        x = F.relu6(self.bn0(self.conv_stem(x)))
        for block in self.blocks:
            x = block(x)
        x = F.relu6(self.bn1(self.conv_head(x)))
        x = fw.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(self.dropout(x))
