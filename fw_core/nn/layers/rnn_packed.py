"""Running RNN, LSTM and GRU over a PackedSequence, as PyTorch does: each sequence stops at its
own length, so its final state is the state after its last real step and the reverse
direction starts at that step (not at the padding).

The batch is sorted longest first, so the steps fall into runs over which the number of live
sequences is constant. Each run is one call of the layer's op on the first ``b`` sequences
(the others' states pass through unchanged): as many op calls per layer and direction as there
are distinct lengths, and every step computed is a real one.
"""

from __future__ import annotations

__all__ = ["run_packed"]

from ..._state import state
from ...errors import ShapeError
from ...ops.indexing import index_select
from ...ops.meta import describe
from ...ops.shape import cat, narrow, reshape, stack
from ..utils.rnn import PackedSequence


def _runs(batch_sizes: list[int]) -> list[tuple[int, int, int, int]]:
    """(first row of data, steps, live sequences, first step) for each run of equal sizes."""
    runs, row, t = [], 0, 0
    while t < len(batch_sizes):
        size, start = batch_sizes[t], t
        while t < len(batch_sizes) and batch_sizes[t] == size:
            t += 1
        runs.append((row, t - start, size, start))
        row += (t - start) * size
    return runs


def _direction(module, data, runs, state_, weights, reverse: bool):
    """One layer in one direction over packed ``data`` (rows, features): its packed output
    and the final state tuple, each (batch, size) in sorted order."""
    outputs = [None] * len(runs)
    for i in (reversed(range(len(runs))) if reverse else range(len(runs))):
        row, steps, size, _ = runs[i]
        x = reshape(narrow(data, 0, row, steps * size), (steps, size, data.shape[1]))
        live = tuple(narrow(s, 0, 0, size) for s in state_)
        y, final = module._layer(x, live, weights, reverse)
        outputs[i] = reshape(y, (steps * size, y.shape[2]))
        batch = state_[0].shape[0]
        state_ = tuple(f if size == batch else cat([f, narrow(s, 0, size, batch - size)], 0)
                       for f, s in zip(final, state_))
    return cat(outputs, 0) if len(outputs) > 1 else outputs[0], state_


def run_packed(module, packed: PackedSequence, hx_parts: tuple):
    """``module`` (an ``_RNNBase``) over ``packed``, with initial states ``hx_parts`` (each
    (num_layers * D, batch, size) in the caller's batch order, or None for zeros).

    Returns (the output PackedSequence, the final states stacked as ``hx_parts``, in the
    caller's batch order).
    """
    data = packed.data
    if data.ndim != 2 or data.shape[1] != module.input_size:
        raise ShapeError(f"expected packed data of shape (steps, input_size="
                         f"{module.input_size}), got {tuple(data.shape)}",
                         op=type(module).__name__, module=state.module_path or None,
                         inputs=describe((data,)),
                         hint="pack a (L, N, input_size) batch with pack_padded_sequence")
    sizes = [int(n) for n in packed.batch_sizes.tolist()]
    batch = sizes[0]
    states = module._initial_states(hx_parts, data, batch, True, packed.sorted_indices)
    runs = _runs(sizes)
    x, finals = module._run(data, states, lambda x, state_, weights, reverse: _direction(
        module, x, runs, state_, weights, reverse))
    stacked = [stack([f[i] for f in finals], 0) for i in range(len(finals[0]))]
    if packed.unsorted_indices is not None:
        stacked = [index_select(s, 1, packed.unsorted_indices) for s in stacked]
    out = PackedSequence(x, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
    return out, stacked

