"""Kernels by op family, each written once against an array namespace ``xp``.

Each family module exposes ``kernels(xp, special) -> dict[op name, callable]``; ``special`` is
the namespace with ``erf`` and ``expit`` (``scipy.special`` on the CPU, ``cupyx.scipy.special``
on CUDA). A device plugin for another NumPy-like namespace reuses them by calling
:func:`all_kernels` with its own namespaces.
"""

from __future__ import annotations

from . import (
    conv,
    counting,
    creation,
    diagonals,
    elementwise,
    index_update,
    linalg,
    loss,
    nn,
    optim,
    pooling,
    reduction,
    reinterpret,
    resample,
    rnn,
    scans,
    selection,
    shape,
    sorting,
    windows,
)

FAMILIES = (creation, elementwise, reduction, shape, sorting, scans, linalg, conv, pooling,
            resample, nn, rnn, loss, optim, selection, index_update,
            diagonals, windows, reinterpret, counting)


def all_kernels(xp, special) -> dict:
    """Every family's kernels for namespace ``xp``: {op name: kernel}."""
    table: dict = {}
    for family in FAMILIES:
        table.update(family.kernels(xp, special))
    return table
