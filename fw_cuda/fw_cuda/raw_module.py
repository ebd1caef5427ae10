"""A CUDA C source compiled by CuPy on its first launch, for the hand-written kernels."""

from __future__ import annotations


class RawModule:
    """``source``'s ``extern "C"`` entry points ``kernels``, built as one ``cupy.RawModule``
    (NVRTC; CuPy caches the binary on disk) when a kernel first runs: importing the module that
    holds it needs neither CuPy nor a GPU."""

    def __init__(self, source: str, kernels: tuple[str, ...]):
        self.source, self.kernels = source, kernels
        self.functions: dict | None = None

    def launch(self, kernel: str, grid: int, block: int, args: tuple) -> None:
        """Run entry point ``kernel`` on ``grid`` blocks of ``block`` threads."""
        if self.functions is None:
            import cupy

            module = cupy.RawModule(code=self.source)
            self.functions = {name: module.get_function(name) for name in self.kernels}
        self.functions[kernel]((grid,), (block,), args)
