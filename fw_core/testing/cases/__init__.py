"""fw's op cases by family (each module exports ``CASES``; ``ALL`` joins them): the conformance
suite every device runs (see docs/plugins.md)."""

from . import (
    conv,
    counting,
    creation,
    diagonals,
    elementwise,
    linalg,
    loss,
    nn,
    pooling,
    reduction,
    resample,
    rnn,
    scans,
    selection,
    shape,
    sorting,
    transcendental,
)

ALL = [c for family in (creation, elementwise, transcendental, reduction, shape, sorting, scans,
                        selection, diagonals, linalg, counting, conv, pooling, resample,
                        nn, rnn, loss)
       for c in family.CASES]
