"""N ranks x batch B against 1 process x batch N*B, for 20 steps of a benchmark workload.

Every rank starts from its own random weights (DistributedDataParallel must replace them by rank
0's); rank 0 also trains an unwrapped copy of its initial model on the whole batch. Rank 0
prints one JSON line: the largest loss and weight differences to that reference, and between
the ranks' replicas.
"""

import copy
import json
import sys

import numpy as np

import fw_core as fw
import fw_mpi
from benchmarks.workloads import WORKLOADS
from benchmarks.workloads.common import fw_lib

STEPS = 20


def make_optimizer(workload, which: str, params):
    """The workload's own optimizer, or plain SGD with momentum."""
    if which == "sgd":
        return fw.optim.SGD(params, lr=0.05, momentum=0.9)
    return workload.optimizer(fw.optim, params)


def main(name: str, batch: int, bucket_cap_mb: float, which: str) -> None:
    fw_mpi.init(timeout=60)
    rank, size = fw_mpi.rank(), fw_mpi.size()
    workload, lib = WORKLOADS[name], fw_lib()
    fw.manual_seed(100 + rank)
    model = workload.build(lib)
    reference = copy.deepcopy(model) if rank == 0 else None
    initial_spread = _spread(model)
    ddp = fw_mpi.DistributedDataParallel(model, bucket_cap_mb=bucket_cap_mb)
    opt = make_optimizer(workload, which, ddp.parameters())
    ref_opt = make_optimizer(workload, which, reference.parameters()) if rank == 0 else None
    loss_diff = 0.0
    for step in range(STEPS):
        x, y = workload.data(batch * size, np.random.default_rng(step))
        mine = slice(rank * batch, (rank + 1) * batch)
        loss = workload.loss(lib, ddp(fw.tensor(x[mine])), fw.tensor(y[mine]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        global_loss = fw_mpi.all_reduce(loss.detach(), op="mean").item()
        if rank == 0:
            ref_loss = workload.loss(lib, reference(fw.tensor(x)), fw.tensor(y))
            ref_opt.zero_grad()
            ref_loss.backward()
            ref_opt.step()
            loss_diff = max(loss_diff, abs(global_loss - ref_loss.item()))
    spread = _spread(model)
    if rank == 0:
        weight_diff = float(np.abs(_flat(model) - _flat(reference)).max())
        print(json.dumps({"ranks": size, "buckets": len(ddp.buckets), "loss_diff": loss_diff,
                          "weight_diff": weight_diff, "replica_spread": spread,
                          "initial_spread": initial_spread}), flush=True)


def _flat(model) -> np.ndarray:
    return np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])


def _spread(model) -> float:
    """The largest difference of a weight between two ranks."""
    w = fw.tensor(_flat(model))
    high = fw_mpi.all_reduce(w, op="max").numpy()
    return float((high - fw_mpi.all_reduce(w, op="min").numpy()).max())


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4])
