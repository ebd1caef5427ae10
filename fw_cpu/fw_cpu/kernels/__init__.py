"""Kernels by op family, each written once against an array namespace ``xp``.

Each family module defines its kernels (and their private ``_helpers``) as module-level
functions: one that needs the namespace takes ``xp`` as its first parameter, one that needs
``special`` takes it right after ``xp``, and one that needs neither takes neither. ``special`` is
the namespace with ``erf`` and ``expit`` (``scipy.special`` on the CPU, ``cupyx.scipy.special``
on CUDA). The module's ``kernels(xp, special) -> dict[op name, callable]`` only binds them,
with ``functools.partial`` (``{"cumsum": partial(cumsum, xp), "sort": xp.sort}``: a namespace
function that serves an op as it is stays direct), so every kernel can be imported, documented
and profiled, and is named in a traceback. A device plugin for another NumPy-like namespace
reuses them by calling :func:`all_kernels` with its own namespaces.
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
