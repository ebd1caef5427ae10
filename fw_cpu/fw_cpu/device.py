"""The ``cpu`` device record: NumPy arrays, host memory, nothing to synchronise."""

from __future__ import annotations

import numpy as np

from fw_core.records import DeviceSpec


def _from_numpy(array: np.ndarray, index: int) -> np.ndarray:
    return array


def _to_numpy(array: np.ndarray) -> np.ndarray:
    return array


CPU = DeviceSpec(
    name="cpu",
    xp=np,
    array_type=np.ndarray,
    from_numpy=_from_numpy,
    to_numpy=_to_numpy,
    description="host CPU, NumPy arrays (BLAS for contractions)",
)
