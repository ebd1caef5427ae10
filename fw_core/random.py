"""Random number generators: a seedable default and explicit ``Generator`` objects.

Random tensors are drawn on the host with NumPy's PCG64 and moved to their device, so the same
seed gives the same numbers on every device.
"""

from __future__ import annotations

import numpy as np


class Generator:
    """A random stream; ``fw.Generator().manual_seed(0)`` like PyTorch."""

    def __init__(self, seed: int | None = None):
        self.manual_seed(np.random.SeedSequence().entropy if seed is None else seed)

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self.numpy = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> dict:
        """The stream's state (a JSON-friendly dict), for checkpoints."""
        return {"seed": self._seed, "bit_generator": self.numpy.bit_generator.state}

    def set_state(self, state: dict) -> None:
        self._seed = state["seed"]
        self.numpy.bit_generator.state = state["bit_generator"]


default_generator = Generator(0)


def manual_seed(seed: int) -> Generator:
    """Seed the default generator: the same seed gives the same run."""
    return default_generator.manual_seed(seed)


def get_rng_state() -> dict:
    return default_generator.get_state()


def set_rng_state(state: dict) -> None:
    default_generator.set_state(state)
