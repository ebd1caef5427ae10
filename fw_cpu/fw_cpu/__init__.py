"""fw's CPU device plugin: NumPy kernels (xp-generic) registered through ``fw.plugins``."""

__version__ = "0.1.0"
