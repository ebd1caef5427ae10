"""Operands of one logical shape in the memory layouts fw hands to kernels: contiguous, a
transposed view, rows with padding (a leading dimension larger than the row), every second
column (strided in both matrix dimensions: oneDNN refuses it), every second element of a vector
(a matrix with one dimension of size 1, whose stride does not matter) and a permuted batch."""

import numpy as np


def views(rng, shape, dtype=np.float32) -> dict[str, np.ndarray]:
    """{name: array of ``shape``} with the same kind of random values in each layout."""

    def draw(s):
        return rng.standard_normal(s).astype(dtype)

    out = {"contiguous": draw(shape)}
    if len(shape) >= 2:
        out["transposed"] = np.swapaxes(draw(shape[:-2] + (shape[-1], shape[-2])), -1, -2)
        out["padded_rows"] = draw(shape[:-1] + (shape[-1] + 3,))[..., :shape[-1]]
        out["every_second_column"] = draw(shape[:-1] + (2 * shape[-1],))[..., ::2]
    if len(shape) == 1:
        out["every_second"] = draw((2 * shape[0],))[::2]
    if len(shape) >= 3:
        out["permuted_batch"] = np.swapaxes(draw((shape[1], shape[0]) + shape[2:]), 0, 1)
    return out


#: layouts with a matrix dimension of unit stride: oneDNN has JIT kernels for all of them
SERVED = ("contiguous", "transposed", "padded_rows", "every_second", "permuted_batch")


def servable(name: str, shape: tuple[int, ...]) -> bool:
    """Whether oneDNN has a JIT kernel for an operand of this layout and shape: a matrix with a
    dimension of size 1 is a vector, whatever its stride."""
    return name in SERVED or 1 in shape[-2:]
