"""A third-party op that writes into its input (``effects=``) is respected by the compiler: dead-
code elimination keeps it, CSE does not merge two calls, constant folding does not run it once
at compile time, whatever becomes of its output."""

import pytest

import fw_core as fw
from fw_core import hookimpl
from fw_core.ops import anchors
from fw_core.ops.dispatch import apply
from fw_core.ops.registry import define_op
from fw_core.records import KernelSpec, Structure, TensorSpec


def _bump(counter):
    """counter += 1 in place; returns a copy of the old value."""
    old = counter.copy()
    counter += 1
    return old


class Bumper:
    """An in-process plugin with one op, ``bump``, whose kernel writes its input."""

    op = define_op("bump", family="custom", doc="counter += 1 in place; the old value.",
                   signature="bump(counter: Tensor) -> Tensor",
                   meta=lambda c: TensorSpec(tuple(c.shape), c.dtype), vjp=None,
                   structure=Structure.ELEMENTWISE, anchor=anchors.flat("a counter"),
                   effects=(0,))

    @hookimpl
    def fw_register_ops(self):
        return [self.op]

    @hookimpl
    def fw_register_kernels(self):
        return [KernelSpec(op="bump", device="cpu", fn=_bump)]


@pytest.fixture
def bump():
    fw.plugins.register(Bumper(), "fw_bumper")
    yield lambda t: apply(fw.ops.get("bump"), (t,))
    fw.plugins.unregister("fw_bumper")


def _runs(fn, *args, times=4):
    compiled = fw.compile(fn)
    for _ in range(times):
        compiled(*args)
    return compiled


def test_an_op_whose_result_nobody_reads_still_runs(bump):
    counter = fw.zeros(3)

    def step(x):
        bump(counter)  # result dropped: only the effect matters
        return x * 2

    compiled = _runs(step, fw.ones(3))
    assert counter.tolist() == [4.0] * 3
    assert compiled.plans()  # the runs after the first ones were the plan's


def test_two_identical_calls_are_not_merged(bump):
    counter = fw.zeros(2)

    def step(x):
        return bump(counter) + bump(counter) + x

    _runs(step, fw.ones(2))
    assert counter.tolist() == [8.0, 8.0]


def test_a_tensor_the_op_writes_is_made_again_on_every_run_not_folded(bump):
    def step(x):
        counter = fw.zeros(1)  # folded, it would be one constant shared by every run
        bump(counter)
        return x + bump(counter)

    compiled = fw.compile(step)
    results = [compiled(fw.zeros(1)).item() for _ in range(4)]
    assert results == [1.0] * 4  # each run starts from a fresh zero and bumps it twice
    assert compiled.plans()


def test_a_tensor_written_through_a_view_is_not_folded_either(bump):
    def step(x):
        counter = fw.zeros(4).reshape(2, 2)  # the view shares the zeros' memory
        bump(counter)
        return x + bump(counter)

    compiled = fw.compile(step)
    results = [compiled(fw.zeros(2, 2)).sum().item() for _ in range(5)]
    assert results == [4.0] * 5
    assert compiled.plans()


def test_a_write_into_a_tensor_made_from_python_data_runs_eagerly(bump):
    def step(x):
        counter = fw.tensor([0.0])  # a constant of the plan
        bump(counter)
        return x + bump(counter)

    compiled = fw.compile(step)
    results = [compiled(fw.zeros(1)).item() for _ in range(4)]
    assert results == [1.0] * 4
    assert "bump writes into a tensor made inside the function" in str(fw.compile.explain())


def test_the_contract_checks_effects():
    with pytest.raises(ValueError, match="effects are input positions"):
        define_op("bad_effects", family="custom", doc="-", signature="bad(x)",
                  meta=lambda x: x, vjp=None, structure=Structure.ELEMENTWISE,
                  anchor=anchors.flat("-"), effects=("x",))
    assert fw.ops.get("batch_norm").effects == {1, 2}
    writers = {name for name, op in fw.OPS.items() if op.effects}
    assert writers == {"batch_norm", "adam_update", "sgd_update", "rmsprop_update",
                       "adagrad_update", "adadelta_update", "adamax_update", "nadam_update",
                       "radam_update", "asgd_update", "rprop_update", "index_write"}


@pytest.mark.parametrize("make", [lambda: fw.zeros(3), lambda: fw.tensor([0.0, 0.0, 0.0]),
                                  lambda: fw.empty(3)], ids=["zeros", "tensor", "empty"])
def test_a_returned_constant_is_a_new_array_on_every_run(make):
    compiled = fw.compile(lambda x: (x + 1, make()))
    for _ in range(4):
        compiled(fw.ones(3))
    first = compiled(fw.ones(3))[1]
    first._data[:] = 7  # the caller writes into one result
    second = compiled(fw.ones(3))[1]
    assert second._data is not first._data
    if make().tolist() == [0.0] * 3:  # not empty's arbitrary values
        assert second.tolist() == [0.0] * 3
    assert compiled.plans()
