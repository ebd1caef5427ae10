"""nonzero, masked_select/masked_scatter, take, repeat_interleave, the index_* writes and
scatter_reduce beyond the conformance cases: gradients at zeros and ties against torch, the
in-place forms, and the errors torch raises (the same builtin exception types)."""

import numpy as np
import pytest
import torch

import fw_core as fw

X = np.arange(1.0, 10.0, dtype=np.float32).reshape(3, 3)

ERRORS = [
    ("masked_select with a float mask", lambda m, x: m.masked_select(x, x), RuntimeError),
    ("masked_scatter short of source",
     lambda m, x: x.masked_scatter(x > 0, m.ones(2, dtype=x.dtype)), RuntimeError),
    ("masked_scatter of another dtype",
     lambda m, x: x.masked_scatter(x > 0, m.ones(9, dtype=m.float64)), RuntimeError),
    ("index_add with a source of another length",
     lambda m, x: x.index_add(0, m.tensor([0]), m.ones(2, 3, dtype=x.dtype)), RuntimeError),
    ("index_add with a float index",
     lambda m, x: x.index_add(0, m.tensor([0.0]), m.ones(1, 3, dtype=x.dtype)), RuntimeError),
    ("index_copy out of range",
     lambda m, x: x.index_copy(0, m.tensor([5]), m.ones(1, 3, dtype=x.dtype)), IndexError),
    ("index_fill out of range", lambda m, x: x.index_fill(0, m.tensor([5]), 1.0), IndexError),
    ("take out of range", lambda m, x: x.take(m.tensor([9])), IndexError),
    ("take_along_dim with fewer index dims",
     lambda m, x: x.take_along_dim(m.tensor([0]), 1), RuntimeError),
    ("negative repeats", lambda m, x: m.repeat_interleave(m.tensor([-1])), RuntimeError),
    ("repeats of the wrong length",
     lambda m, x: x.repeat_interleave(m.tensor([1, 2]), 0), RuntimeError),
    ("scatter_reduce with an unknown reduce",
     lambda m, x: x.scatter_reduce(0, m.zeros(3, 3, dtype=m.int64), x, "INVALID"), RuntimeError),
    ("scatter_reduce with src of another dtype",
     lambda m, x: x.scatter_reduce(0, m.zeros(3, 3, dtype=m.int64), x.half(), "sum"),
     RuntimeError),
]


@pytest.mark.parametrize("what, call, expected", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_the_exceptions_torch_raises(what, call, expected):
    with pytest.raises(expected):
        call(torch, torch.tensor(X))
    with pytest.raises(expected) as info:
        call(fw, fw.tensor(X))
    assert isinstance(info.value, fw.errors.FwError)


def _both(fn, *arrays):
    """fn on fw and torch tensors of ``arrays`` (float ones require grad), a shared cotangent
    backpropagated; returns (fw output, torch output, fw grads, torch grads)."""
    ours = [fw.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    theirs = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    out_f, out_t = fn(fw, *ours), fn(torch, *theirs)
    cotangent = np.random.default_rng(0).standard_normal(tuple(out_t.shape))
    out_f.backward(fw.tensor(cotangent))
    out_t.backward(torch.tensor(cotangent))
    return out_f, out_t, [t.grad for t in ours if t.requires_grad], \
        [t.grad for t in theirs if t.requires_grad]


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce, x, src", [
    ("prod", [[0.0, 2.0, 1.0], [3.0, 0.0, 2.0]], [[2.0, 0.0, 4.0], [0.0, 3.0, 0.0],
                                                 [0.5, 0.0, 2.0]]),
    ("amax", [[1.0, 5.0, 2.0], [0.0, 5.0, 3.0]], [[1.0, 5.0, 2.0], [1.0, 0.0, 3.0],
                                                 [0.0, 5.0, 3.0]]),
    ("amin", [[1.0, 0.0, 2.0], [0.0, 5.0, 3.0]], [[1.0, 0.0, 2.0], [1.0, 0.0, 3.0],
                                                 [0.0, 5.0, 3.0]]),
    ("mean", [[1.0, 0.0, 2.0], [0.0, 5.0, 3.0]], [[1.0, 0.0, 2.0], [1.0, 0.0, 3.0],
                                                 [0.0, 5.0, 3.0]]),
])
def test_scatter_reduce_gradients_at_zeros_and_ties_are_torchs(reduce, x, src, include_self):
    index = np.array([[0, 1, 0], [0, 0, 1], [1, 1, 1]])
    out_f, out_t, grads_f, grads_t = _both(
        lambda m, a, i, s: m.scatter_reduce(a, 0, i, s, reduce, include_self=include_self),
        np.array(x), index, np.array(src))
    np.testing.assert_allclose(out_f.detach().numpy(), out_t.detach().numpy())
    for ours, theirs in zip(grads_f, grads_t):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)


def test_scatter_reduce_keeps_positions_no_index_names():
    x = fw.tensor([[9.0, 9.0], [9.0, 9.0]])
    out = x.scatter_reduce(0, fw.tensor([[0, 0]]), fw.tensor([[1.0, 2.0]]), "amin",
                           include_self=False)
    assert out.tolist() == [[1.0, 2.0], [9.0, 9.0]]


def test_in_place_forms_write_into_the_tensor_and_bump_its_version():
    cases = [
        ("index_add_", (0, torch.tensor([2, 2]), torch.ones(2, 3)), {"alpha": 3}),
        ("index_copy_", (1, torch.tensor([0]), torch.full((3, 1), 7.0)), {}),
        ("index_fill_", (0, torch.tensor([1]), -1.0), {}),
        ("masked_scatter_", (torch.tensor(X) > 4, torch.arange(9.0)), {}),
        ("scatter_reduce_", (0, torch.tensor([[1, 0, 1]]), torch.ones(1, 3) * 2, "prod"), {}),
    ]
    for name, args, kwargs in cases:
        expected = torch.tensor(X)
        getattr(expected, name)(*args, **kwargs)
        ours = fw.tensor(X)
        version = ours._version if hasattr(ours, "_version") else None
        back = getattr(ours, name)(*(fw.tensor(a.numpy()) if isinstance(a, torch.Tensor) else a
                                     for a in args), **kwargs)
        assert back is ours, name
        np.testing.assert_array_equal(ours.numpy(), expected.numpy(), err_msg=name)
        if version is not None:
            assert ours._version != version, name


def test_nonzero_as_tuple_and_on_0d_inputs_match_torch():
    for values in ([[0, 3], [4, 0]], 5, 0, [0.0, -0.0, 2.5]):
        ours, theirs = fw.tensor(values), torch.tensor(values)
        assert ours.nonzero().tolist() == theirs.nonzero().tolist()
        assert ours.nonzero().shape == tuple(theirs.nonzero().shape)
        pairs = zip(ours.nonzero(as_tuple=True), theirs.nonzero(as_tuple=True), strict=True)
        assert all(a.tolist() == b.tolist() and a.dtype is fw.int64 for a, b in pairs)


def test_repeat_interleave_with_output_size_and_a_0d_input():
    assert fw.tensor(3.0).repeat_interleave(2).tolist() == [3.0, 3.0]
    counts = fw.tensor([0, 2, 0, 1])
    assert fw.repeat_interleave(counts, output_size=3).tolist() == [1, 1, 3]
    with pytest.raises(RuntimeError, match="output_size"):
        fw.repeat_interleave(counts, output_size=4)


def test_masked_select_gradient_sums_over_the_broadcast_copies():
    _, _, (grad_f,), (grad_t,) = _both(lambda m, x, k: m.masked_select(x, k), X[:1], X > 4)
    np.testing.assert_allclose(grad_f.numpy(), grad_t.numpy())
