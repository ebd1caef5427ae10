"""Gradient buckets and their all-reduce during backward (DDP's reducer).

Parameters are grouped, in reverse registration order (roughly the order backward produces
their gradients), into buckets of at most ``bucket_cap_mb`` of one dtype. Each parameter's
post-accumulate hook marks it ready; when every parameter of a bucket is ready, its gradients
are copied into the bucket's flat buffer and a non-blocking in-place ``Iallreduce`` starts,
while backward goes on computing the earlier layers. Buckets start strictly in index order
(every rank then issues the same collectives in the same order, whatever order its backward
finished them in); once the last bucket has started — every gradient is final — the reducer
waits for all of them and writes the averaged gradients back into each ``.grad``, so the
optimizer step that follows reads averaged gradients.
"""

from __future__ import annotations

import numpy as np

import fw_core as fw
from fw_core import capture
from fw_core.autograd import register_post_accumulate_grad_hook

from .errors import DistributedError
from .waiting import start


class Bucket:
    """Parameters whose gradients travel in one all-reduce, and the flat buffer they share."""

    def __init__(self, index: int, params: list, dtype):
        self.index = index
        self.params = params
        self.offsets = np.cumsum([0, *(p._data.size for p in params)])
        self.flat = np.zeros(int(self.offsets[-1]), dtype)
        self.ready = 0
        self.pending = None

    @property
    def nbytes(self) -> int:
        return self.flat.nbytes


def make_buckets(params: list, cap_bytes: int) -> list[Bucket]:
    """Buckets over ``params`` taken in reverse order, each of one dtype and at most
    ``cap_bytes`` (a parameter larger than that gets a bucket of its own)."""
    groups: list[list] = []
    size = 0
    for p in reversed(params):
        nbytes = p._data.nbytes
        if not groups or groups[-1][0]._data.dtype != p._data.dtype or size + nbytes > cap_bytes:
            groups.append([])
            size = 0
        groups[-1].append(p)
        size += nbytes
    return [Bucket(i, g, g[0]._data.dtype) for i, g in enumerate(groups)]


class Reducer:
    """Averages the gradients of ``params`` over the ranks during each backward pass."""

    def __init__(self, named_params: list[tuple[str, object]], bucket_cap_mb: float,
                 ranks: int):
        params = [p for _, p in named_params if p.requires_grad]
        if not params:
            raise DistributedError("DistributedDataParallel got a module with no parameter "
                                   "that requires grad", op="DistributedDataParallel",
                                   hint="wrap the module you train")
        self.names = {id(p): n for n, p in named_params}
        self.buckets = make_buckets(params, max(1, int(bucket_cap_mb * 2**20)))
        self.bucket_of = {id(p): b for b in self.buckets for p in b.params}
        self.scale = 1.0 / ranks
        self.syncing = True
        self.next = 0  # the next bucket to start
        self.sent_bytes = 0  # what this rank has passed to all-reduces, in all
        self.handles = [register_post_accumulate_grad_hook(p, self._grad_ready)
                        for p in params]

    @property
    def gradient_bytes(self) -> int:
        return sum(b.nbytes for b in self.buckets)

    def check_finished(self) -> None:
        """Raise if the last backward pass left some buckets unreduced (a parameter got no
        gradient), instead of letting the ranks drift apart."""
        if self.next == 0 and not any(b.ready for b in self.buckets):
            return
        missing = [self.names[id(p)] for b in self.buckets for p in b.params
                   if b.index >= self.next and p.grad is None]
        missing = missing or [self.names[id(b.params[0])] for b in self.buckets
                              if b.index >= self.next]
        self._reset()
        raise DistributedError(
            "the previous backward pass did not reduce every gradient: parameter(s) "
            f"{', '.join(missing[:5])} received no gradient", op="DistributedDataParallel",
            hint="every parameter the wrapper holds must take part in the loss on every rank "
                 "(freeze unused ones with requires_grad_(False) before wrapping)")

    def _grad_ready(self, p) -> None:
        if not self.syncing:
            return
        bucket = self.bucket_of[id(p)]
        bucket.ready += 1
        while self.next < len(self.buckets) and \
                self.buckets[self.next].ready == len(self.buckets[self.next].params):
            self._start(self.buckets[self.next])
            self.next += 1
        for b in self.buckets[:self.next]:
            b.pending.test()  # lets MPI move the earlier buckets along
        if self.next == len(self.buckets):
            self._finish()

    def _start(self, bucket: Bucket) -> None:
        if any(p.grad is None for p in bucket.params):  # a parameter with no gradient: zeros
            _no_plan()
            self._begin(bucket, tuple(None if p.grad is None else p.grad._data
                                      for p in bucket.params))
            return
        # a host effect of the plan when the step is compiled: each replay starts this bucket
        # at the same point of backward, on that replay's gradient arrays
        capture.host_effect_on(f"DistributedDataParallel: start the all-reduce of bucket "
                               f"{bucket.index}", [p.grad for p in bucket.params],
                               lambda arrays: self._begin(bucket, arrays))

    def _begin(self, bucket: Bucket, grads: tuple) -> None:
        """Copy ``grads`` (one array or None per parameter) into the bucket, start its
        all-reduce."""
        from mpi4py import MPI

        flat = bucket.flat
        for g, lo, hi in zip(grads, bucket.offsets[:-1], bucket.offsets[1:]):
            if g is None:
                flat[lo:hi] = 0
            else:
                flat[lo:hi] = g.reshape(-1)
        self.sent_bytes += flat.nbytes
        bucket.pending = start(f"DistributedDataParallel gradient bucket {bucket.index}",
                               lambda comm: comm.Iallreduce(MPI.IN_PLACE, flat, op=MPI.SUM))

    def _finish(self) -> None:
        params = [p for b in self.buckets for p in b.params]
        for p in params:
            if p.grad is None:
                _no_plan()
                p.grad = fw.from_numpy(np.zeros(p._data.shape, p._data.dtype))
        capture.host_effect_on("DistributedDataParallel: wait for the all-reduces, write the "
                               "averaged gradients", [p.grad for p in params], self._complete)
        self._reset()

    def _complete(self, grads: tuple) -> None:
        """Wait for every bucket in order and write its averages into ``grads`` (the arrays of
        all parameters' gradients, bucket by bucket)."""
        k = 0
        for bucket in self.buckets:
            bucket.pending.wait()
            flat = bucket.flat
            flat *= flat.dtype.type(self.scale)
            for lo, hi in zip(bucket.offsets[:-1], bucket.offsets[1:]):
                grads[k][...] = flat[lo:hi].reshape(grads[k].shape)
                k += 1
            bucket.pending = None

    def _reset(self) -> None:
        for b in self.buckets:
            b.ready = 0
            b.pending = None
        self.next = 0


def _no_plan() -> None:
    """A parameter reached by backward got no gradient: the reduction then depends on which
    parameters did, which a compiled plan cannot replay, so the step stays eager."""
    capture.cannot_replay("a parameter under DistributedDataParallel got no gradient in this "
                          "backward pass", hint="make every parameter take part in the loss")
