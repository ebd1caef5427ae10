"""``SyncBatchNorm``: batch normalization whose batch statistics are those of the global batch
(every rank's share together), and ``convert_sync_batchnorm`` to switch a model's BatchNorms.

Training: each rank sums x and x² per channel and counts its elements; one differentiable
all-reduce makes the global sums, from which mean and biased variance normalize and the running
estimates move (with the unbiased variance, as BatchNorm does). The all-reduce's gradient is
the all-reduce of the incoming gradients, so backward is exact too: N ranks x batch B with
SyncBatchNorm train as one process with BatchNorm on batch N*B. Evaluation uses the running
estimates, like BatchNorm, with no communication.
"""

from __future__ import annotations

import fw_core as fw
from fw_core.autograd import Function, no_grad
from fw_core.nn import Module
from fw_core.nn.layers.normalization import _BatchNorm

from .collectives import all_reduce
from .world import size


class _SumOverRanks(Function):
    """y = the sum over ranks of x (every rank gets y); dx = the sum over ranks of dy."""

    @staticmethod
    def forward(ctx, x):
        return all_reduce(x, op="sum")

    @staticmethod
    def backward(ctx, grad):
        return all_reduce(grad, op="sum")


class SyncBatchNorm(_BatchNorm):
    """Batch normalization over the global batch of all ranks, for inputs (N, C, ...) of two
    or more dimensions; arguments as ``fw.nn.BatchNorm2d``. One all-reduce of 2·C + 1 values
    per layer per forward, and one in backward."""

    _dims = (2, 3, 4, 5)
    _layout = "(N, C, ...)"

    def forward(self, x):
        if not self.training or size() == 1:
            return super().forward(x)
        channels = x.shape[1]
        axes = (0, *range(2, x.ndim))
        local_count = x.numel() // channels
        sums = fw.cat([x.sum(axes), (x * x).sum(axes),
                       fw.full((1,), float(local_count), dtype=x.dtype)])
        total = _SumOverRanks.apply(sums)
        count = float(total[2 * channels].item())
        mean = total[:channels] / count
        var = total[channels:2 * channels] / count - mean * mean
        if self.track_running_stats:
            self._track(mean.detach(), var.detach(), count)
        shape = (1, channels) + (1,) * (x.ndim - 2)
        y = (x - mean.reshape(shape)) / fw.sqrt(var.reshape(shape) + self.eps)
        if self.weight is not None:
            y = y * self.weight.reshape(shape) + self.bias.reshape(shape)
        return y

    def _track(self, mean, var, count: float) -> None:
        with no_grad():
            self.num_batches_tracked._data[...] += 1
            factor = (1.0 / float(self.num_batches_tracked.item()) if self.momentum is None
                      else self.momentum)
            unbiased = var * (count / max(count - 1.0, 1.0))
            self.running_mean._data[...] = ((1 - factor) * self.running_mean
                                            + factor * mean)._data
            self.running_var._data[...] = ((1 - factor) * self.running_var
                                           + factor * unbiased)._data


def convert_sync_batchnorm(module: Module) -> Module:
    """``module`` with every BatchNorm1d/2d replaced by a SyncBatchNorm holding the same
    parameters and running statistics (PyTorch's ``SyncBatchNorm.convert_sync_batchnorm``);
    a BatchNorm given itself comes back converted."""
    if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
        sync = SyncBatchNorm(module.num_features, eps=module.eps, momentum=module.momentum,
                             affine=module.affine,
                             track_running_stats=module.track_running_stats)
        sync.load_state_dict(module.state_dict())
        sync.train(module.training)
        return sync
    for name, child in list(module.named_children()):
        converted = convert_sync_batchnorm(child)
        if converted is not child:
            setattr(module, name, converted)
    return module
