"""Selection kernels (``nonzero``), written once against ``xp``."""

from __future__ import annotations


def kernels(xp, special) -> dict:
    def nonzero(x, count):
        return xp.argwhere(x).astype(xp.int64, copy=False)

    return {"nonzero": nonzero}
