"""Matrix products: ``linear`` (either weight layout), ``matmul`` and ``bmm``, each one
``np.matmul`` into the output (and one in-place add for a bias)."""

from __future__ import annotations

import numpy as np

from ..errors import EdgeError
from ..kernel_api import Kernel, Writes


def linear(spec):
    """``x @ w.T + b`` (``weight_layout="out_in"``, fw's) or ``x @ w + b`` (``"in_out"``)."""
    layout = spec.attrs.get("weight_layout", "out_in")
    if layout not in ("out_in", "in_out"):
        raise EdgeError(f"{spec.where}: weight_layout {layout!r} is neither 'out_in' nor "
                        "'in_out'; export the model again")
    matmul, add = np.matmul, np.add
    biased = len(spec.inputs) > 2 and spec.inputs[2] is not None  # trailing None may be left off
    if layout == "in_out":
        if not biased:
            return Writes(lambda out, x, w, b=None: matmul(x, w, out=out))

        def run(out, x, w, b):
            matmul(x, w, out=out)
            add(out, b, out=out)
        return Writes(run)
    if not biased:
        return Writes(lambda out, x, w, b=None: matmul(x, w.T, out=out))

    def run_t(out, x, w, b):
        matmul(x, w.T, out=out)
        add(out, b, out=out)
    return Writes(run_t)


def matmul(spec):
    """``a @ b`` with NumPy's broadcasting (``bmm`` is its 3-d case)."""
    product = np.matmul
    return Writes(lambda out, a, b: product(a, b, out=out))


KERNELS = [Kernel("linear", linear), Kernel("matmul", matmul),
           Kernel("bmm", matmul)]
