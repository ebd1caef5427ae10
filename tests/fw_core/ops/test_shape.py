"""Shape and indexing ops beyond the conformance cases: view semantics, item assignment,
PyTorch's indexing rules, double backward of every VJP, and the errors users see."""

import re

import numpy as np
import pytest

import fw_core as fw
from fw_core.errors import AutogradError, DTypeError, ShapeError, UnsupportedError


def arange(*shape, dtype=fw.float32):
    return fw.tensor(np.arange(np.prod(shape)).reshape(shape), dtype=dtype)


# -- views share storage and the version counter --------------------------------------------------
VIEWS = {
    "reshape": lambda x: x.reshape(4, 6),
    "view": lambda x: x.view(-1),
    "flatten": lambda x: x.flatten(1),
    "unflatten": lambda x: x.unflatten(2, (2, 2)),
    "squeeze": lambda x: x.unsqueeze(0).squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "transpose": lambda x: x.transpose(0, 2),
    "permute": lambda x: x.permute(1, 2, 0),
    "T": lambda x: x.T,
    "mT": lambda x: x.mT,
    "expand": lambda x: x[:, :1].expand(2, 5, 4),
    "int": lambda x: x[1],
    "slices": lambda x: x[:, 1:, ::2],
    "none_ellipsis": lambda x: x[None, ..., 0],
    "narrow": lambda x: x.narrow(2, 1, 2),
    "select": lambda x: x.select(1, -1),
    "split": lambda x: x.split(1, 0)[1],
    "chunk": lambda x: x.chunk(2, 2)[0],
    "unbind": lambda x: x.unbind(1)[0],
}


@pytest.mark.parametrize("make", VIEWS.values(), ids=VIEWS.keys())
def test_view_shares_storage_and_version_counter(make):
    x = arange(2, 3, 4)
    v = make(x)
    assert v._vc is x._vc is not None
    assert np.shares_memory(v.numpy(), x.numpy())


@pytest.mark.parametrize("make", [VIEWS["reshape"], VIEWS["slices"], VIEWS["T"]])
def test_write_through_a_view_changes_the_base(make):
    x = arange(2, 3, 4)
    v = make(x)
    before = x._version
    v[...] = -1.0
    assert (x.numpy() == -1).sum() == v.numel()
    assert x._version == before + 1


def test_modifying_a_view_breaks_backward_through_a_saved_base():
    a = fw.tensor([0.5, 1.0, 2.0], requires_grad=True)
    base = a * 1.0
    out = base.sin()  # saves base for its backward
    with fw.no_grad():
        view = base.view(3)[1:]
        view[0] = 7.0
    with pytest.raises(AutogradError, match="modified in place"):
        out.backward(fw.ones_like(out))


def test_copies_do_not_share_the_version_counter():
    x = arange(3, 4)
    assert x.mT.reshape(-1)._vc is not x._vc  # a transposed flatten must copy
    assert x[[0, 2]]._vc is not x._vc and not np.shares_memory(x[[0, 2]].numpy(), x.numpy())
    flipped = x.flip(0)
    flipped[0, 0] = 100.0
    assert x.numpy()[2, 0] == 8.0  # flip copies, as in PyTorch


def test_view_refuses_a_layout_that_needs_a_copy():
    with pytest.raises(ShapeError, match=r"cannot be viewed as \(12,\)") as info:
        arange(3, 4).mT.view(12)
    assert "reshape" in str(info.value)


def test_contiguous_returns_self_or_a_row_major_copy():
    x = arange(3, 4)
    assert x.contiguous() is x and x.is_contiguous()
    c = x.mT.contiguous()
    assert not x.mT.is_contiguous() and c.is_contiguous()
    assert c.tolist() == x.numpy().T.tolist()


# -- item assignment on tensors that need no grad -------------------------------------------------
def test_setitem_with_ints_slices_masks_lists_and_tensors():
    x = fw.zeros(3, 4)
    x[0] = 1.0
    x[1, 1:3] = fw.tensor([2.0, 3.0])
    x[x == 3.0] = 4.0
    x[fw.tensor([2, 2])] = fw.tensor(5.0)
    x[[0], [3]] = 6.0
    x[:, fw.tensor([True, False, False, False])] += 10.0
    assert x.tolist() == [[11, 1, 1, 6], [10, 2, 4, 0], [15, 5, 5, 5]]
    assert x._version == 6


def test_setitem_errors():
    x = fw.zeros(3, 4)
    with pytest.raises(ShapeError, match="index 3 is out of range for dimension 0 of size 3"):
        x[3] = 1.0
    with pytest.raises(ShapeError, match="index -5 is out of range for dimension 1 of size 4"):
        x[1:, -5] = 1.0
    with pytest.raises(ShapeError, match="out of range for dimension 1 of size 4"):
        x[:, fw.tensor([0, 4])] = 1.0
    with pytest.raises(ShapeError, match=r"mask of shape \(2,\) does not match"):
        x[fw.tensor([True, False])] = 1.0
    with pytest.raises(UnsupportedError, match=r"x\[0\]\[:, idx\]"):
        fw.zeros(2, 3, 4)[0, :, [1, 2]] = 1.0
    with pytest.raises(AutogradError, match="requires grad"):
        fw.zeros(2, requires_grad=True)[0] = 1.0


# -- PyTorch's indexing rules ---------------------------------------------------------------------
def test_integers_apply_before_arrays_as_in_pytorch():
    x = arange(3, 4, 5)
    assert x[0, :, [1, 2]].shape == (4, 2)  # NumPy: (2, 4)
    assert x[0, :, [1, 2]].tolist() == x.numpy()[0][:, [1, 2]].tolist()
    assert x[[0, 1], :, [1, 2]].shape == (2, 4)  # non-adjacent arrays go first in both
    assert x[:, 0, [1, 2]].shape == (3, 2)
    assert x[fw.tensor(1), :, [0, 1]].shape == (4, 2)  # a 0-d tensor acts like an int


def test_index_forms():
    x = arange(3, 4)
    assert x[[]].shape == (0, 4)
    assert x[True].shape == (1, 3, 4)
    assert x[np.array([2, 0])].tolist() == [[8, 9, 10, 11], [0, 1, 2, 3]]
    assert x[fw.tensor(2, dtype=fw.int32)].tolist() == [8, 9, 10, 11]
    assert x[..., -1].tolist() == [3, 7, 11]
    assert [row.tolist() for row in x[:2]] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert x[1, 2].shape == () and x[1, 2].item() == 6


def test_index_errors():
    x = arange(3, 4)
    with pytest.raises(ShapeError, match="index 5 is out of range for dimension 1 of size 4"):
        x[0, 5]
    with pytest.raises(ShapeError, match="index 7 is out of range for dimension 0 of size 3"):
        x[fw.tensor([0, 7])]
    with pytest.raises(ShapeError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(UnsupportedError, match="step must be positive") as info:
        x[::-1]
    assert "fw.flip" in str(info.value)
    with pytest.raises(DTypeError, match="integer or bool"):
        x[fw.tensor([0.0])]
    with pytest.raises(ShapeError, match="only one ellipsis"):
        x[..., ...]
    with pytest.raises(ShapeError, match=r"too many indices \(1\) for a tensor of shape \(\)"):
        fw.tensor(1.0)[0]


def test_getitem_gradient_accumulates_repeated_indices():
    x = fw.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x[[0, 0, 2, 0]]
    y.backward(fw.tensor([1.0, 2.0, 3.0, 4.0]))
    assert x.grad.tolist() == [7.0, 0.0, 3.0]
    m = fw.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    picked = m[m > 1.5]
    picked.backward(fw.ones_like(picked))
    assert m.grad.tolist() == [[0.0, 1.0], [1.0, 1.0]]


# -- joins, splits, gathers -----------------------------------------------------------------------
def test_split_chunk_unbind_follow_pytorch():
    x = arange(6)
    assert [p.shape for p in x.split([1, 5])] == [(1,), (5,)]
    assert [p.shape for p in x.split(4)] == [(4,), (2,)]
    assert len(x.chunk(4)) == 3 and len(x.chunk(6)) == 6
    assert [p.shape for p in fw.zeros(0).chunk(3)] == [(0,)] * 3
    assert [p.shape for p in fw.zeros(0).split(2)] == [(0,)]
    assert [t.tolist() for t in arange(2, 2).unbind(1)] == [[0, 2], [1, 3]]


def test_unused_split_pieces_get_zero_gradient():
    x = fw.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, _, c = x.split([1, 2, 1])
    (a * 2 + c * 3).backward(fw.ones(1))
    assert x.grad.tolist() == [2.0, 0.0, 0.0, 3.0]


def test_cat_promotes_and_stack_adds_a_dimension():
    out = fw.cat([fw.ones(1, dtype=fw.int64), fw.zeros(2, dtype=fw.float16)])
    assert out.dtype is fw.float16 and out.tolist() == [1, 0, 0]
    assert fw.stack([fw.ones(2), fw.zeros(2)], dim=1).tolist() == [[1, 0], [1, 0]]


def test_scatter_writes_and_scatter_add_accumulates():
    x = fw.zeros(2, 3)
    index = fw.tensor([[0, 1, 0]])
    assert x.scatter(1, index, fw.tensor([[5.0, 6.0, 7.0]])).tolist()[0] in ([7, 6, 0],
                                                                              [5, 6, 0])
    assert x.scatter_add(1, index, fw.tensor([[5.0, 6.0, 7.0]])).tolist() == [[12, 6, 0],
                                                                              [0, 0, 0]]
    assert x.scatter(0, fw.tensor([[1, 0, 1]]), 9.0).tolist() == [[0, 9, 0], [9, 0, 9]]


def test_masked_fill_with_a_tensor_value_gets_its_gradient():
    x = fw.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = fw.tensor(5.0, requires_grad=True)
    out = x.masked_fill(fw.tensor([True, False, True]), v)
    out.backward(fw.ones(3))
    assert out.tolist() == [5, 2, 5] and v.grad.item() == 2.0
    assert x.grad.tolist() == [0, 1, 0]


def test_inplace_variants_write_into_storage():
    x = arange(3, 3)
    x.masked_fill_(x > 6, 0.0)
    x.tril_()
    x.scatter_(1, fw.tensor([[2], [2], [2]]), -1.0)
    assert x.tolist() == [[0, 0, -1], [3, 4, -1], [6, 0, -1]]
    assert x._version == 3


def test_one_hot_is_int64_and_infers_classes():
    out = fw.one_hot(fw.tensor([2, 0]))
    assert out.dtype is fw.int64 and out.tolist() == [[0, 0, 1], [1, 0, 0]]


# -- double backward: each VJP is itself differentiable ------------------------------------------
IDX = fw.tensor([[2, 0, 1], [0, 0, 2]])
LINEAR = {
    "reshape": (lambda x: x.reshape(-1, 2), (3, 4)),
    "permute": (lambda x: x.permute(1, 0), (3, 4)),
    "expand": (lambda x: x[:, :1].expand(3, 5), (3, 4)),
    "repeat": (lambda x: x.repeat(2, 1, 2), (3, 4)),
    "cat": (lambda x: fw.cat([x, x[1:]], 0), (3, 4)),
    "stack": (lambda x: fw.stack([x, x], -1), (3, 4)),
    "getitem_basic": (lambda x: x[1:, None, ::2], (3, 4)),
    "getitem_repeats": (lambda x: x[[0, 0, 2], 1:], (3, 4)),
    "getitem_mixed": (lambda x: x[0, :, [1, 1]], (2, 3, 4)),
    "gather": (lambda x: x.gather(1, IDX), (2, 4)),
    "scatter_src": (lambda x: fw.zeros(2, 4, dtype=fw.float64).scatter(
        1, fw.tensor([[2, 0, 1], [0, 1, 3]]), x), (2, 3)),
    "scatter_x": (lambda x: x.scatter(1, IDX, 0.0), (2, 4)),
    "scatter_add": (lambda x: fw.zeros(2, 4, dtype=fw.float64).scatter_add(1, IDX, x), (2, 3)),
    "index_select": (lambda x: x.index_select(1, fw.tensor([3, 0, 3])), (2, 4)),
    "masked_fill": (lambda x: x.masked_fill(fw.tensor([True, False, True]), 0.0), (2, 3)),
    "pad_constant": (lambda x: fw.pad(x, (1, 2, 0, 1)), (2, 3)),
    "pad_reflect": (lambda x: fw.pad(x, (2, 1), mode="reflect"), (2, 4)),
    "pad_replicate": (lambda x: fw.pad(x, (2, 1, 1, 1), mode="replicate"), (2, 3)),
    "pad_circular": (lambda x: fw.pad(x, (3, 1), mode="circular"), (2, 3)),
    "flip": (lambda x: x.flip(0, 1), (3, 4)),
    "roll": (lambda x: x.roll((1, 3), (0, 1)), (3, 4)),
    "tril": (lambda x: x.tril(1), (3, 4)),
    "triu": (lambda x: x.triu(-1), (3, 4)),
    "split": (lambda x: x.split([1, 2], 0)[1], (3, 4)),
}


@pytest.mark.parametrize("fn, shape", LINEAR.values(), ids=LINEAR.keys())
def test_vjp_of_vjp_gives_back_the_op(fn, shape):
    """For a linear op f, grad_v <J^T v, w> = J w = f(w): the VJP's own VJP must be f."""
    rng = np.random.default_rng(0)
    x = fw.tensor(rng.standard_normal(shape), requires_grad=True)
    out = fn(x)
    v = fw.tensor(rng.standard_normal(out.shape), requires_grad=True)
    (gx,) = fw.autograd.grad(out, x, v, create_graph=True)
    assert gx.requires_grad
    w = fw.tensor(rng.standard_normal(shape))
    (gv,) = fw.autograd.grad(gx, v, w)
    np.testing.assert_allclose(gv.numpy(), fn(w).numpy(), rtol=1e-12, atol=1e-12)


# -- errors read like a teacher -------------------------------------------------------------------
@pytest.mark.parametrize("call, error, pattern", [
    (lambda: arange(2, 3).reshape(4, 2), ShapeError,
     r"shape \(2, 3\) \(6 elements\) into shape \(4, 2\) \(8 elements\)"),
    (lambda: arange(2, 3).reshape(-1, -1), ShapeError, "at most one may be -1"),
    (lambda: arange(2, 3).reshape(-2, -3), ShapeError, "sizes must be >= 0"),
    (lambda: arange(6).unflatten(0, (4, -1)), ShapeError, "not a multiple of 4"),
    (lambda: arange(2, 3).reshape(4, -1), ShapeError, "not a multiple of 4"),
    (lambda: fw.cat([fw.zeros(2, 3), fw.zeros(2, 4)]), ShapeError,
     r"except in dimension 0.*dimension 1 differs"),
    (lambda: fw.cat([fw.zeros(2, 3), fw.zeros(3)]), ShapeError, "tensor 1 has 1 dimensions"),
    (lambda: fw.cat([]), ShapeError, "non-empty"),
    (lambda: fw.stack([fw.zeros(2), fw.zeros(3)]), ShapeError, "same shape"),
    (lambda: arange(2, 3).permute(0, 0), ShapeError, "not a permutation"),
    (lambda: arange(2, 3).transpose(0, 2), ShapeError, "dimension 2 is out of range"),
    (lambda: arange(2, 3).expand(4, 3), ShapeError, "only size-1 dimensions"),
    (lambda: arange(3).expand(-1, 3), ShapeError, "new leading dimension"),
    (lambda: arange(2, 3).repeat(2), ShapeError, "one per dimension"),
    (lambda: arange(2, 3).gather(1, fw.tensor([[0, 3]])), ShapeError, "out of range"),
    (lambda: arange(2, 3).gather(1, fw.tensor([[0.0]])), DTypeError, "integer"),
    (lambda: arange(2, 3).gather(1, fw.zeros(3, 1, dtype=fw.int64)), ShapeError, "larger"),
    (lambda: arange(2, 3).scatter(0, fw.tensor([[0]]), fw.ones(1, 1, dtype=fw.float64)),
     DTypeError, "src is float64"),
    (lambda: arange(2, 3).index_select(0, fw.tensor([[0]])), ShapeError, "1-d index"),
    (lambda: arange(2, 3).index_select(0, fw.tensor([2])), ShapeError, "out of range"),
    (lambda: arange(2, 3).masked_fill(fw.tensor([1, 0, 1]), 0.0), DTypeError, "bool"),
    (lambda: arange(2).masked_fill(fw.ones(2, 2, dtype=fw.bool), 0.0), ShapeError,
     "does not broadcast"),
    (lambda: fw.pad(arange(2, 3), (3, 0), mode="reflect"), ShapeError, "must be < the size"),
    (lambda: fw.pad(arange(2, 3), (1,)), ShapeError, "even length"),
    (lambda: fw.pad(arange(2, 3), (1, 1), mode="wrap"), UnsupportedError, "unknown padding"),
    (lambda: fw.pad(arange(2, 3), (1, 1), mode="reflect", value=1.0), UnsupportedError,
     "takes no value"),
    (lambda: arange(3).roll((1, 2), 0), ShapeError, "must pair up"),
    (lambda: arange(3).tril(), ShapeError, "at least 2 dimensions"),
    (lambda: arange(3).flip((0, 0)), ShapeError, "repeat a dimension"),
    (lambda: fw.one_hot(fw.tensor([0, 3]), 3), ShapeError, r"in \[0, 3\)"),
    (lambda: fw.one_hot(fw.tensor([0.0])), DTypeError, "integer"),
    (lambda: arange(6).split([2, 2]), ShapeError, "add up to 6"),
    (lambda: arange(6).chunk(0), ShapeError, "positive"),
    (lambda: fw.tensor(1.0).unbind(), ShapeError, "0-d"),
    (lambda: arange(6).narrow(0, 4, 3), ShapeError, "does not fit"),
    (lambda: arange(2, 3).flatten(1, 0), ShapeError, "comes after"),
    (lambda: arange(2, 3).view(fw.float64), DTypeError, "must be divisible by 2"),
])
def test_errors_name_the_op_shapes_and_a_fix(call, error, pattern):
    with pytest.raises(error, match=pattern) as info:
        call()
    text = str(info.value)
    assert re.match(r"^\w+: ", text) and "\n  fix: " in text  # the op first, a fix last


# -- negative pads crop, in every mode, as torch ---------------------------------------------------
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pad", [(2, -1), (-1, 2), (1, -2, 2, -1), (3, -2, 0, -3), (-2, -1)])
def test_negative_pads_crop_as_torch(mode, pad):
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(0).standard_normal((1, 2, 4, 5)[2 - len(pad) // 2:])
    x = fw.tensor(data, requires_grad=True)
    t = torch.tensor(data, requires_grad=True)
    ours, theirs = fw.pad(x, pad, mode=mode), torch.nn.functional.pad(t, pad, mode=mode)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    g = np.random.default_rng(1).standard_normal(tuple(theirs.shape))
    ours.backward(fw.tensor(g))
    theirs.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), atol=1e-12)


def test_circular_pads_wrap_the_cropped_input_at_most_once():
    with pytest.raises(RuntimeError, match="circular padding"):
        fw.pad(arange(1, 1, 5), (3, -3), mode="circular")
