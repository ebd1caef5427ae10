"""Threads: grad mode, module path, inspectors and traces belong to the thread that set them.

Every test forces the interleaving that process-wide state got wrong with events, barriers or
a relay, so none depends on how the scheduler of the machine happens to switch threads. The
waits time out only to turn a hang into an error; nothing asserts a duration. Models are built
(and their data drawn) before the threads start: the default generator is process-wide.
"""

from __future__ import annotations

import threading
from dataclasses import asdict

import numpy as np
import pytest

import fw_core as fw
from fw_core import scheduler
from fw_core.compile.trace import trace
from fw_core.records import Inspector

THREADS = 4
WAIT_S = 60  # only so that a thread that never arrives fails the test instead of hanging it


def _wait(event: threading.Event) -> None:
    if not event.wait(WAIT_S):
        raise TimeoutError("the other thread never got there")


def run_threads(jobs, abort=lambda: None) -> None:
    """Run each job in its own thread and re-raise the first exception one of them raised;
    ``abort()`` is called when a job fails, so the others stop waiting for it."""
    errors: list[BaseException] = []

    def guarded(job):
        try:
            job()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            errors.append(exc)
            abort()

    threads = [threading.Thread(target=guarded, args=(job,)) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


class Relay:
    """Orders the threads' optimizer updates within each step: they enter their update in
    index order, then leave it one after the other, thread i once thread i-1 has finished its
    ``step()``. Were grad mode one for the process, only thread 0 would find it on when
    entering, and thread n-1, restoring last, would turn it off for every thread."""

    def __init__(self, count: int):
        self.count = count
        self._cond = threading.Condition()
        self._entered: dict[int, int] = {}
        self._left: dict[int, int] = {}
        self._broken = False

    def inside_update(self, index: int, step: int) -> None:
        with self._cond:
            self._wait_for(lambda: self._entered.get(step, 0) == index)
            self._entered[step] = index + 1
            self._cond.notify_all()
            self._wait_for(lambda: self._entered[step] == self.count
                           and self._left.get(step, 0) == index)

    def stepped(self, step: int) -> None:
        with self._cond:
            self._left[step] = self._left.get(step, 0) + 1
            self._cond.notify_all()

    def abort(self) -> None:
        with self._cond:
            self._broken = True
            self._cond.notify_all()

    def _wait_for(self, predicate) -> None:
        if not self._cond.wait_for(lambda: self._broken or predicate(), WAIT_S):
            raise TimeoutError("a thread never reached its turn")
        if self._broken:
            raise RuntimeError("another thread failed")


class RelayAdam(fw.optim.Adam):
    """Adam whose update waits for its turn in a :class:`Relay` (the arithmetic is Adam's)."""

    def __init__(self, params, relay: Relay, index: int, **hyper):
        super().__init__(params, **hyper)
        self.relay, self.index, self.updates = relay, index, 0

    def _update(self, group) -> None:
        self.relay.inside_update(self.index, self.updates)
        self.updates += 1
        super()._update(group)


class Rendezvous(fw.nn.Module):
    """Waits in every eager or traced forward until all threads are inside theirs."""

    def __init__(self, barrier: threading.Barrier | None):
        super().__init__()
        self.barrier = barrier

    def forward(self, x):
        if self.barrier is not None:
            self.barrier.wait()
        return x


class ThreadNet(fw.nn.Sequential):
    """Linear, BatchNorm, ReLU, a rendezvous point, Linear: a model with running statistics."""

    def __init__(self, seed: int, barrier: threading.Barrier | None = None):
        fw.manual_seed(seed)
        super().__init__(fw.nn.Linear(6, 16), fw.nn.BatchNorm1d(16), fw.nn.ReLU(),
                         Rendezvous(barrier), fw.nn.Linear(16, 3))


def data(seed: int, batches: int = 4, size: int = 8):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batches * size, 6)).astype(np.float32)
    y = rng.integers(0, 3, batches * size)
    return fw.tensor(x), fw.tensor(y)


def weights(module) -> dict:
    return {name: t.numpy().copy() for name, t in module.state_dict().items()}


def assert_same_weights(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def train_eager(model, x, y, optimizer, steps: int, stepped=lambda step: None) -> None:
    for step in range(steps):
        rows = slice(8 * (step % 4), 8 * (step % 4) + 8)
        loss = fw.cross_entropy(model(x[rows]), y[rows])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        stepped(step)


@pytest.fixture
def no_fusion():
    """Fusion off: whether a group pays is measured, so threads timing each other could choose
    other kernels (another summation order) than a run alone."""
    before = scheduler.knobs()
    scheduler.configure(fusion="never")
    yield
    scheduler.configure(**asdict(before))


# -- training --------------------------------------------------------------------------------------
def test_threads_training_their_own_models_at_once_match_each_model_trained_alone():
    steps = 6
    alone = []
    for k in range(THREADS):
        model = ThreadNet(k)
        x, y = data(k)
        train_eager(model, x, y, fw.optim.Adam(model.parameters(), lr=1e-2), steps)
        alone.append(weights(model))

    relay = Relay(THREADS)
    models = [ThreadNet(k) for k in range(THREADS)]
    inputs = [data(k) for k in range(THREADS)]
    optimizers = [RelayAdam(m.parameters(), relay, k, lr=1e-2) for k, m in enumerate(models)]

    def job(k):
        return lambda: train_eager(models[k], *inputs[k], optimizers[k], steps, relay.stepped)

    run_threads([job(k) for k in range(THREADS)], relay.abort)
    for k in range(THREADS):
        assert_same_weights(weights(models[k]), alone[k])


def test_threads_fitting_their_own_models_compiled_match_each_model_fitted_alone(no_fusion):
    def fit(model, seed):
        trainer = fw.Model(model)
        trainer.compile(optimizer="adam", loss="cross_entropy")
        trainer.fit(*data(seed), epochs=2, batch_size=8, shuffle=False, verbose=0)
        return trainer

    alone = []
    for seed in range(THREADS):
        alone.append(fit(ThreadNet(seed), seed))
    # every thread is inside its forward at once in each eager and each traced call
    barrier = threading.Barrier(THREADS, timeout=WAIT_S)
    models = [ThreadNet(seed, barrier) for seed in range(THREADS)]
    trainers: dict[int, fw.Model] = {}

    def job(seed):
        return lambda: trainers.__setitem__(seed, fit(models[seed], seed))

    run_threads([job(seed) for seed in range(THREADS)], barrier.abort)
    for seed in range(THREADS):
        assert_same_weights(weights(models[seed]), weights(alone[seed].module))
    # 8 steps in 2 epochs each: two eager, one traced, three plans; the second epoch traced
    # again (Model.fit retraces at each epoch), then three plans; never falling back to eager
    lines = [line for line in fw.compile.explain().splitlines()
             if line.startswith("ThreadNet.train_step:")]
    assert len(lines) == 2 * THREADS
    assert all("plan_calls 4, eager_calls 2, compiles 1" in line and "retraces 1" in line
               and "fallbacks 0" in line
               for line in lines), "\n".join(lines)


# -- grad mode -------------------------------------------------------------------------------------
def test_no_grad_in_one_thread_never_changes_another_threads_grad_mode():
    # threads enter no_grad in order 0..3, then leave it in the same order: with one mode for
    # the process, thread 0 restored "on" first and thread 3 (which had found it off) last
    entered = [threading.Event() for _ in range(THREADS)]
    left = [threading.Event() for _ in range(THREADS)]
    seen: dict[int, list[bool]] = {}
    w = fw.tensor([1.0, 2.0], requires_grad=True)

    def job(k):
        def run():
            if k:
                _wait(entered[k - 1])
            with fw.no_grad():
                modes = [fw.is_grad_enabled()]
                entered[k].set()
                _wait(entered[-1])
                if k:
                    _wait(left[k - 1])
                modes.append(fw.is_grad_enabled())
            modes.append(fw.is_grad_enabled())
            modes.append((w * 2).grad_fn is not None)
            seen[k] = modes
            left[k].set()
        return run

    def recorder():  # records while every other thread is inside no_grad
        _wait(entered[-1])
        seen["main"] = [fw.is_grad_enabled(), (w * 3).grad_fn is not None]

    run_threads([job(k) for k in range(THREADS)] + [recorder])
    assert seen == {**{k: [False, False, True, True] for k in range(THREADS)},
                    "main": [True, True]}
    assert fw.is_grad_enabled()


def test_dataloader_workers_take_the_grad_mode_of_the_thread_that_iterates():
    class GradModes(fw.data.Dataset):
        def __len__(self):
            return 12

        def __getitem__(self, index):
            return float(fw.is_grad_enabled())

    loader = fw.data.DataLoader(GradModes(), batch_size=1, num_workers=2)
    with fw.no_grad():
        batches = iter(loader)
        modes = [next(batches).item()]
    # later batches are submitted to the workers only now, after the loop left no_grad:
    # the workers keep the mode they started with, as PyTorch's do
    modes += [batch.item() for batch in batches]
    assert modes == [0.0] * 12
    assert [batch.item() for batch in loader] == [1.0] * 12


# -- module path, inspectors, traces ---------------------------------------------------------------
class Waits(fw.nn.Module):
    """Its forward sets ``inside``, waits for ``go``, then runs ``then(x)``."""

    def __init__(self, inside, go, then):
        super().__init__()
        self.inside, self.go, self.then = inside, go, then

    def forward(self, x):
        self.inside.set()
        _wait(self.go)
        return self.then(x)


def test_an_error_in_a_thread_names_that_threads_module_path():
    left_inside, right_inside = threading.Event(), threading.Event()
    done = threading.Event()
    wrong = fw.randn(5, 2)

    left = fw.nn.Sequential(fw.nn.Linear(3, 3), Waits(left_inside, right_inside,
                                                      lambda x: x @ wrong))
    right = fw.nn.ModuleDict({"decoder": Waits(right_inside, done, fw.relu)})
    caught: dict = {}

    def run_left():
        try:
            left(fw.randn(2, 3))
        except fw.errors.ShapeError as error:
            caught["error"] = error
        finally:
            done.set()

    def run_right():  # inside module "decoder" while the left thread's matmul fails
        _wait(left_inside)
        caught["right"] = right["decoder"](fw.randn(2, 2))

    run_threads([run_left, run_right])
    assert caught["error"].op == "matmul" and caught["error"].module == "1"
    assert "in module: 1" in str(caught["error"])
    assert caught["right"].module == "decoder"


def test_an_inspector_active_in_one_thread_sees_only_that_threads_ops():
    events = []
    watcher = Inspector("test.threads.watcher", on_op=lambda e: events.append(
        (threading.current_thread().name, e.op.name)))
    active, other_ran = threading.Event(), threading.Event()
    x = fw.randn(3)
    seen_elsewhere = {}

    def watched():
        with fw.inspectors.activated(watcher):
            active.set()
            _wait(other_ran)
            fw.tanh(x)
        seen_elsewhere["after"] = fw.inspectors.active()

    def unwatched():
        _wait(active)
        seen_elsewhere["during"] = fw.inspectors.active()
        fw.exp(x)
        other_ran.set()

    run_threads([watched, unwatched])
    assert [op for _, op in events] == ["tanh"]
    assert seen_elsewhere == {"during": [], "after": []}


def test_a_trace_in_one_thread_records_none_of_another_threads_ops():
    tracing, other_ran = threading.Event(), threading.Event()
    a, b = fw.randn(4), fw.randn(4)
    graphs = {}

    def traced(x):
        y = fw.sin(x)
        tracing.set()
        _wait(other_ran)  # the other thread runs and traces its own ops meanwhile
        return y * 2.0

    def first():
        tracer, _ = trace(traced, (a,))
        graphs["first"] = tracer

    def second():
        _wait(tracing)
        fw.exp(b)  # eager, outside any trace
        tracer, _ = trace(lambda x: fw.cos(x) + 1.0, (b,))
        graphs["second"] = tracer
        other_ran.set()

    run_threads([first, second])
    for name, expected in (("first", ["sin", "mul"]), ("second", ["cos", "add"])):
        tracer = graphs[name]
        assert [node.op.name for node in tracer.graph.nodes()] == expected
        assert tracer.breaks == []
