"""Small MPI scenarios the tests launch with ``mpiexec -n N``: each rank prints one JSON line
(``{"rank": r, ...}``) with what it saw. ``python scenarios.py NAME``."""

import json
import sys
import time

import numpy as np

import fw_core as fw
import fw_mpi
from fw_mpi import waiting


def say(**fields) -> None:
    print(json.dumps({"rank": fw_mpi.rank(), **fields}), flush=True)


def collectives() -> None:
    r, n = fw_mpi.rank(), fw_mpi.size()
    x = fw.tensor(np.arange(6, dtype=np.float32).reshape(n * 0 + 2, 3) + 10 * r)
    say(sum=fw_mpi.all_reduce(x).tolist(), mean=fw_mpi.all_reduce(x, op="mean").tolist(),
        max=fw_mpi.all_reduce(x, op="max").tolist(), min=fw_mpi.all_reduce(x, op="min").tolist(),
        broadcast=fw_mpi.broadcast(x, src=n - 1).tolist(),
        gather=[t.tolist() for t in fw_mpi.all_gather(x)],
        scatter=fw_mpi.reduce_scatter(fw.tensor(np.arange(2 * n, dtype=np.float64) + r)).tolist(),
        input=x.tolist(), local_rank=fw_mpi.local_rank(), size=n)


def mismatch() -> None:
    """Rank 1's second layer is wider: wrapping must raise on every rank."""
    wide = 6 if fw_mpi.rank() == 1 else 5
    model = fw.nn.Sequential(fw.nn.Linear(4, 5), fw.nn.Linear(5, wide))
    try:
        fw_mpi.DistributedDataParallel(model)
    except fw_mpi.RankMismatchError as e:
        say(error=str(e))


def timeout() -> None:
    """Rank 1 is late to an all_reduce (it sleeps past the others' timeout, then joins)."""
    fw_mpi.barrier()
    if fw_mpi.rank() == 1:
        time.sleep(4.0)
    try:
        fw_mpi.all_reduce(fw.ones(3), timeout=1.5)
        say(error=None)
    except fw_mpi.CollectiveTimeoutError as e:
        say(error=str(e))
    fw_mpi.barrier(timeout=30)


def abort() -> None:
    """Rank 1 raises; rank 0 waits in a barrier that would last a minute."""
    fw_mpi.barrier()
    if fw_mpi.rank() == 1:
        raise ValueError("boom on rank 1")
    fw_mpi.barrier(timeout=60)
    say(error="the barrier returned")


def no_sync() -> None:
    """Micro-batch 0 under no_sync, micro-batch 1 synchronised: the gradients are the average
    over ranks of the sums, and no_sync's backward ran no collective."""
    r, n = fw_mpi.rank(), fw_mpi.size()
    fw.manual_seed(0)
    model = fw.nn.Linear(3, 2)
    ddp = fw_mpi.DistributedDataParallel(model, bucket_cap_mb=1e-5)
    data = np.random.default_rng(5).standard_normal((2, n, 4, 3)).astype(np.float32)
    with ddp.no_sync():
        before = waiting._the_log().count
        (ddp(fw.tensor(data[0, r])) ** 2).mean().backward()
        during = waiting._the_log().count - before
    (ddp(fw.tensor(data[1, r])) ** 2).mean().backward()
    ref = fw.nn.Linear(3, 2)
    ref.load_state_dict(model.state_dict())
    for k in range(n):
        for m in range(2):
            (ref(fw.tensor(data[m, k])) ** 2).mean().backward()
    diff = max(float(np.abs(p.grad.numpy() - q.grad.numpy() / n).max())
               for p, q in zip(model.parameters(), ref.parameters()))
    say(collectives_in_no_sync=during, grad_diff=diff, buckets=len(ddp.buckets))


def diverged() -> None:
    """Rank 1 changes a weight behind the wrapper's back: check_parameters raises everywhere,
    and so does the periodic check (every 2nd forward)."""
    ddp = fw_mpi.DistributedDataParallel(fw.nn.Sequential(fw.nn.Linear(3, 3), fw.nn.Linear(3, 1)),
                                         check_every=2)
    try:
        ddp.check_parameters()
        say(first=None)
    except fw_mpi.RankMismatchError as e:
        say(first=str(e))
    if fw_mpi.rank() == 1:
        ddp.module[1].bias._data[...] += 1
    try:
        ddp.check_parameters()
        say(second=None)
    except fw_mpi.RankMismatchError as e:
        say(second=str(e))
    try:
        for _ in range(4):
            ddp(fw.ones(1, 3))
        say(periodic=None)
    except fw_mpi.RankMismatchError as e:
        say(periodic=str(e), periodic_at=ddp._forwards)


def compiled() -> None:
    """The same DDP training step (four buckets) eager and under fw.compile, 8 steps on each
    rank's own data: equal weights, and the plan holds the all-reduce as host effects in bucket
    order, inside backward, the wait before the optimizer's updates."""
    results = []
    for use_compile in (False, True):
        fw.manual_seed(0)
        model = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 2))
        ddp = fw_mpi.DistributedDataParallel(model, bucket_cap_mb=5e-5)
        opt = fw.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)

        def step(x):
            loss = (ddp(x) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.detach()

        run = fw.compile(step) if use_compile else step
        for i in range(8):
            run(fw.tensor(np.random.default_rng(10 * i + fw_mpi.rank())
                          .standard_normal((5, 4)).astype(np.float32)))
        results.append(np.concatenate([p.detach().numpy().ravel() for p in model.parameters()]))
    (plan,) = run.plans()
    steps = [getattr(s, "what", None) or type(s).__name__ for s in plan.graph.steps]
    effects = [w for w in steps if w.startswith("DistributedDataParallel")]
    say(diff=float(np.abs(results[0] - results[1]).max()), explain=run.explain(),
        effects=effects, buckets=len(ddp.buckets),
        wait_before_update=steps.index(effects[-1]) < min(
            i for i, s in enumerate(plan.graph.steps) if getattr(s, "kind", "") == "update"),
        start_before_last_node=steps.index(effects[0]) < max(
            i for i, w in enumerate(steps) if w in ("Node", "Group")))


def refusals() -> None:
    """Errors raised before any communication, each message by name; one-rank identities."""
    class TwoHeads(fw.nn.Module):
        def __init__(self):
            super().__init__()
            self.used, self.unused = fw.nn.Linear(2, 1), fw.nn.Linear(2, 1)

        def forward(self, x):
            return self.used(x)

    def unused():
        ddp = fw_mpi.DistributedDataParallel(TwoHeads(), bucket_cap_mb=1e-6)
        ddp(fw.ones(3, 2)).sum().backward()
        ddp(fw.ones(3, 2))

    cases = {"op": lambda: fw_mpi.all_reduce(fw.ones(2), op="avg"),
             "int_mean": lambda: fw_mpi.all_reduce(fw.tensor([1, 2]), op="mean"),
             "scatter_shape": lambda: fw_mpi.reduce_scatter(fw.ones(3)),
             "frozen": lambda: fw_mpi.DistributedDataParallel(
                 fw.nn.Linear(2, 2).requires_grad_(False)),
             "unused": unused}
    errors = {}
    for name, case in cases.items():
        try:
            case()
            errors[name] = None
        except fw_mpi.DistributedError as e:
            errors[name] = str(e)
    x = fw.tensor([[1.0, 2.0], [3.0, 4.0]])
    say(errors=errors, mean=fw_mpi.all_reduce(x, op="mean").tolist(),
        gather=[t.tolist() for t in fw_mpi.all_gather(x)], input=x.tolist())


def sync_batchnorm() -> None:
    """Conv + BatchNorm2d converted to SyncBatchNorm on N ranks x batch 4 against BatchNorm2d
    in one process on batch 4N: losses, weights and running statistics after 5 SGD steps."""
    r, n = fw_mpi.rank(), fw_mpi.size()

    def build():
        fw.manual_seed(0)
        return fw.nn.Sequential(fw.nn.Conv2d(2, 3, 3), fw.nn.BatchNorm2d(3), fw.nn.ReLU(),
                                fw.nn.Flatten(), fw.nn.Linear(3 * 4 * 4, 2))

    model, reference = fw_mpi.convert_sync_batchnorm(build()), build()
    converted = type(model[1]).__name__
    ddp = fw_mpi.DistributedDataParallel(model)
    opt = fw.optim.SGD(ddp.parameters(), lr=0.1)
    ref_opt = fw.optim.SGD(reference.parameters(), lr=0.1)
    loss_diff = 0.0
    for step in range(5):
        x = np.random.default_rng(step).standard_normal((4 * n, 2, 6, 6)).astype(np.float32)
        loss = (ddp(fw.tensor(x[4 * r:4 * r + 4])) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        ref_loss = (reference(fw.tensor(x)) ** 2).mean()
        ref_opt.zero_grad()
        ref_loss.backward()
        ref_opt.step()
        mean_loss = fw_mpi.all_reduce(loss.detach(), op="mean").item()
        loss_diff = max(loss_diff, abs(mean_loss - ref_loss.item()))
    ours, theirs = model.state_dict(), reference.state_dict()
    diff = max(float(np.abs(ours[k].detach().numpy().astype(np.float64)
                            - theirs[k].detach().numpy()).max()) for k in theirs)
    model.eval()
    reference.eval()
    probe = fw.tensor(np.ones((1, 2, 6, 6), np.float32))
    say(converted=converted, loss_diff=loss_diff, state_diff=diff,
        eval_diff=float(np.abs(model(probe).detach().numpy()
                               - reference(probe).detach().numpy()).max()))


def sampler() -> None:
    """This rank's indices from DistributedSampler with the job's defaults."""
    cases = []
    for length in (10, 11, 7, 3):
        for shuffle in (False, True):
            for drop_last in (False, True):
                s = fw_mpi.DistributedSampler(range(length), shuffle=shuffle, seed=3,
                                              drop_last=drop_last)
                s.set_epoch(2)
                cases.append({"length": length, "shuffle": shuffle, "drop_last": drop_last,
                              "indices": list(s), "len": len(s)})
    say(cases=cases)


if __name__ == "__main__":
    fw_mpi.init(timeout=30)
    globals()[sys.argv[1]]()
