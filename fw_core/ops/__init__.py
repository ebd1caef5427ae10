"""Op contracts by family, the registry, and the eager dispatch path.

``fw.ops.get("relu")`` returns an op's contract; ``fw.ops.OPS`` lists all loaded ops.
Families: creation, elementwise (with transcendental, its further functions, and bitwise),
broadcast, reduction, shape (with rearrange), indexing (with selection, index_update),
diagonals, windows, sorting, scans, linalg (with linalg_composed), counting, conv, pooling,
resample, nn, normalization, attention, rnn, loss, optim.
"""

from . import (
    attention,
    bitwise,
    broadcast,
    composed,
    conv,
    conversions,
    counting,
    creation,
    diagonals,
    elementwise,
    index_update,
    indexing,
    linalg,
    linalg_composed,
    loss,
    nn,
    normalization,
    optim,
    pooling,
    rearrange,
    reduction,
    resample,
    rnn,
    sampling,
    scans,
    selection,
    shape,
    sorting,
    transcendental,
    unique,
    windows,
)
from .dispatch import apply, apply_binary, apply_unary
from .registry import OPS, define_op, devices_with_kernel, get, kernel

FAMILIES = (creation, conversions, elementwise, transcendental, bitwise, broadcast, reduction,
            shape, rearrange, indexing, linalg, conv, pooling, resample, nn, normalization,
            attention, rnn, loss, optim, composed, sorting, scans, unique, selection,
            index_update, diagonals, windows, sampling, counting, linalg_composed)

__all__ = ["FAMILIES", "OPS", "apply", "apply_binary", "apply_unary", "define_op",
           "devices_with_kernel", "get", "kernel"]
