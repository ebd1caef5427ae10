"""A compiled training step runs each optimizer update as a node of its plan: the host work
(step counters, learning rates) is redone on every run and hands the nodes their scalars."""

import numpy as np
import pytest

import fw_core as fw
from fw_core import capture
from fw_core.compile.ir import Effect, Node
from fw_core.errors import UnsupportedError

FAMILIES = [("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}), ("Adam", {"lr": 0.01}),
            ("AdamW", {"lr": 0.01, "amsgrad": True}),
            ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
            ("Adagrad", {"lr": 0.1}), ("Adadelta", {}), ("Adamax", {"lr": 0.01}),
            ("NAdam", {"lr": 0.01}), ("RAdam", {"lr": 0.01}), ("ASGD", {"lr": 0.01}),
            ("Rprop", {"lr": 0.01})]


class Setup:
    """A small classifier, its optimizer with a step scheduler, and one batch."""

    def __init__(self, name, options):
        fw.manual_seed(0)
        self.model = fw.nn.Sequential(fw.nn.Linear(6, 8), fw.nn.Tanh(), fw.nn.Linear(8, 3))
        self.opt = getattr(fw.optim, name)(self.model.parameters(), **options)
        self.sched = fw.optim.lr_scheduler.StepLR(self.opt, step_size=2, gamma=0.5)
        rng = np.random.default_rng(0)
        self.x = fw.tensor(rng.standard_normal((5, 6)).astype(np.float32))
        self.y = fw.tensor(np.array([0, 1, 2, 1, 0]))
        self.loss = fw.nn.CrossEntropyLoss()

    def step(self, x, y):
        self.opt.zero_grad()
        loss = self.loss(self.model(x), y)
        loss.backward()
        self.opt.step()
        return loss

    def train(self, step, calls=6):
        losses = []
        for _ in range(calls):
            losses.append(step(self.x, self.y).item())
            self.sched.step()
        return losses, [p.detach().numpy().copy() for p in self.model.parameters()]


@pytest.fixture
def unfused():
    """Plans without fused kernels (whose rounding differs from eager's in the last bit), so
    a compiled step can be held to eager's results exactly."""
    fw.scheduler.configure(compile_after=0, fusion="never")


@pytest.mark.parametrize("name,options", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_compiled_updates_are_nodes_and_match_eager_to_the_bit(name, options, unfused):
    reference = Setup(name, options)
    eager = reference.train(reference.step)
    setup = Setup(name, options)
    compiled = fw.compile(setup.step)
    losses, params = setup.train(compiled)
    assert losses == eager[0]
    for got, want in zip(params, eager[1]):
        np.testing.assert_array_equal(got, want)
    assert compiled.counts["plan_calls"] == 5  # the learning rate halved twice meanwhile
    graph = compiled.plans()[0].graph
    updates = [s for s in graph.steps if s.__class__ is Node and s.phase == "update"]
    assert len(updates) == 4 and all(n.op.family == "optim" for n in updates)
    effect = next(s for s in graph.steps if s.__class__ is Effect and s.kind == "update")
    assert effect.target == tuple(updates) and effect.what == f"{type(setup.opt).__name__}.step()"


def test_state_loaded_between_calls_is_the_state_the_plan_updates(unfused):
    reference, setup = Setup("Adam", {"lr": 0.01}), Setup("Adam", {"lr": 0.01})
    compiled = fw.compile(setup.step)
    for _ in range(3):
        reference.step(reference.x, reference.y)
        compiled(setup.x, setup.y)
    saved = reference.opt.state_dict()
    for _ in range(2):  # both drift on; then both go back to the saved state
        reference.step(reference.x, reference.y)
        compiled(setup.x, setup.y)
    reference.opt.load_state_dict(saved)
    setup.opt.load_state_dict(saved)
    for p, q in zip(reference.model.parameters(), setup.model.parameters()):
        q.data = p.detach().clone()
    for _ in range(2):
        want = reference.step(reference.x, reference.y).item()
        assert compiled(setup.x, setup.y).item() == want
    for p, q in zip(reference.model.parameters(), setup.model.parameters()):
        np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())


def test_a_step_alone_reads_the_gradients_each_run_starts_with(unfused):
    reference, setup = Setup("SGD", {"lr": 0.1, "momentum": 0.9}), \
        Setup("SGD", {"lr": 0.1, "momentum": 0.9})
    compiled_step = fw.compile(lambda: setup.opt.step())
    for _ in range(3):
        for s, step in ((reference, reference.opt.step), (setup, compiled_step)):
            s.opt.zero_grad()
            s.loss(s.model(s.x), s.y).backward()
            step()
    assert compiled_step.counts["plan_calls"] == 2
    for p, q in zip(reference.model.parameters(), setup.model.parameters()):
        np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())


def test_a_parameter_added_after_the_trace_stops_the_run_with_what_to_do():
    setup = Setup("SGD", {"lr": 0.1})

    def step(x, y):
        setup.loss(setup.model(x), y).backward()
        setup.opt.step()
        setup.opt.zero_grad()

    compiled = fw.compile(step)
    compiled(setup.x, setup.y)
    extra = fw.zeros(2, requires_grad=True)
    setup.opt.add_param_group({"params": [extra]})
    extra.grad = fw.ones(2)  # the new parameter has a gradient: this step would update it
    with pytest.raises(UnsupportedError, match="other parameters") as error:
        compiled(setup.x, setup.y)
    assert "retrace()" in str(error.value)
    extra.grad = fw.ones(2)
    compiled.retrace()
    compiled(setup.x, setup.y)  # traced again with the new group: it runs
    assert extra.tolist() == pytest.approx([-0.1, -0.1])


def test_a_gradient_host_code_replaced_mid_run_keeps_the_step_one_host_effect(unfused):
    setup = Setup("SGD", {"lr": 0.1})
    first = next(setup.model.parameters())

    def step(x, y):
        setup.opt.zero_grad()
        setup.loss(setup.model(x), y).backward()
        capture.host_effect("halve", lambda: setattr(first, "grad", first.grad * 0.5))
        setup.opt.step()

    reference = Setup("SGD", {"lr": 0.1})
    ref_first = next(reference.model.parameters())
    compiled = fw.compile(step)
    for _ in range(3):
        compiled(setup.x, setup.y)
        reference.opt.zero_grad()
        reference.loss(reference.model(reference.x), reference.y).backward()
        ref_first.grad = ref_first.grad * 0.5
        reference.opt.step()
    graph = compiled.plans()[0].graph
    assert [s.what for s in graph.steps if s.__class__ is Effect and s.kind == "call"] == \
        ["SGD.zero_grad()", "halve", "SGD.step()"]
    assert not any(s.__class__ is Node and s.phase == "update" for s in graph.steps)
    for p, q in zip(reference.model.parameters(), setup.model.parameters()):
        np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())
