"""Batches moved to a device one step ahead of the loop that consumes them.

``DataLoader(..., device="cuda")`` starts the copies of batch k+1 before it hands batch k to
the loop, so on a device with an asynchronous ``stage`` (fw_cuda: a pinned host buffer and a
copy stream) the next batch crosses the bus while the current one trains. On devices without
one the copies are simply made in that order.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ..ops.creation import start_to_device
from ..tensor import Tensor


class _Pending:
    """A tensor whose copy has started; ``ready()`` gives the device tensor."""

    __slots__ = ("ready",)

    def __init__(self, ready):
        self.ready = ready


def _map(batch, kind: type, fn):
    """``batch`` with each ``kind`` leaf replaced by ``fn(leaf)``, the structure kept (dicts,
    named tuples, tuples and lists, nested)."""
    if isinstance(batch, kind):
        return fn(batch)
    if isinstance(batch, Mapping):
        return {key: _map(value, kind, fn) for key, value in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(_map(field, kind, fn) for field in batch))
    if isinstance(batch, (tuple, list)):
        return type(batch)(_map(field, kind, fn) for field in batch)
    return batch


def _start(batch, device):
    return _map(batch, Tensor, lambda t: _Pending(start_to_device(t, device)))


def _finish(batch):
    return _map(batch, _Pending, lambda pending: pending.ready())


def one_ahead(batches: Iterator, device) -> Iterator:
    """Yield ``batches`` with their tensors on ``device``, each batch's copies started before
    the previous batch is handed out."""
    pending = None
    for batch in batches:
        started = _start(batch, device)
        if pending is not None:
            yield _finish(pending)
        pending = started
    if pending is not None:
        yield _finish(pending)
