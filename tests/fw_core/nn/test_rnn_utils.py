"""nn.utils.rnn against PyTorch: pad_sequence, pack_padded_sequence, pad_packed_sequence,
pack_sequence, unpad/unpack, PackedSequence fields, and RNN/LSTM/GRU over packed input
(outputs, final states at each sequence's last step, gradients)."""

import numpy as np
import pytest
import torch
import torch.nn.utils.rnn as trnn

import fw_core as fw
import fw_core.nn as nn
from fw_core.nn.utils import rnn as frnn

from .layer_check import copy_weights

rng = np.random.default_rng(0)
IN, HID, T = 3, 4, 6


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach().numpy())


def _same(ours, theirs, atol=1e-10):
    np.testing.assert_allclose(_np(ours), _np(theirs), atol=atol, rtol=1e-7)


def _same_packed(ours, theirs):
    _same(ours.data, theirs.data)
    np.testing.assert_array_equal(_np(ours.batch_sizes), _np(theirs.batch_sizes))
    for a, b in [(ours.sorted_indices, theirs.sorted_indices),
                 (ours.unsorted_indices, theirs.unsorted_indices)]:
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(_np(a), _np(b))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence(batch_first, padding_side):
    seqs = [rng.standard_normal((n, 2)) for n in (3, 5, 1)]
    ours = frnn.pad_sequence([fw.tensor(s) for s in seqs], batch_first, -2.0, padding_side)
    theirs = trnn.pad_sequence([torch.from_numpy(s) for s in seqs], batch_first, -2.0,
                               padding_side)
    _same(ours, theirs)


@pytest.mark.parametrize("lengths,enforce_sorted", [([5, 3, 3, 1], True),
                                                    ([2, 5, 1, 5], False),
                                                    ([4, 4, 4, 4], False)])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_pad_round_trip(lengths, enforce_sorted, batch_first):
    x = rng.standard_normal((4, 5, 2) if batch_first else (5, 4, 2))
    xs = fw.tensor(x, requires_grad=True)
    xt = torch.from_numpy(x).requires_grad_(True)
    ours = frnn.pack_padded_sequence(xs, lengths, batch_first, enforce_sorted)
    theirs = trnn.pack_padded_sequence(xt, lengths, batch_first, enforce_sorted)
    _same_packed(ours, theirs)
    padded, lens = frnn.pad_packed_sequence(ours, batch_first, 0.5, total_length=7)
    padded_t, lens_t = trnn.pad_packed_sequence(theirs, batch_first, 0.5, total_length=7)
    _same(padded, padded_t)
    np.testing.assert_array_equal(_np(lens), _np(lens_t))
    assert lens.dtype == fw.int64
    g = rng.standard_normal(tuple(padded_t.shape))
    padded.backward(fw.tensor(g))
    padded_t.backward(torch.from_numpy(g))
    _same(xs.grad, xt.grad)


def test_pack_sequence_unpack_and_unpad():
    seqs = [rng.standard_normal((n, 2)) for n in (2, 4, 3)]
    ours = frnn.pack_sequence([fw.tensor(s) for s in seqs], enforce_sorted=False)
    theirs = trnn.pack_sequence([torch.from_numpy(s) for s in seqs], enforce_sorted=False)
    _same_packed(ours, theirs)
    for a, b in zip(frnn.unpack_sequence(ours), trnn.unpack_sequence(theirs)):
        _same(a, b)
    padded = frnn.pad_sequence([fw.tensor(s) for s in seqs], batch_first=True)
    for a, s in zip(frnn.unpad_sequence(padded, [2, 4, 3], batch_first=True), seqs):
        _same(a, torch.from_numpy(s))


def test_errors_read_as_torch():
    x = fw.randn(5, 3, 2)
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        frnn.pack_padded_sequence(x, [2, 5, 1])
    with pytest.raises(RuntimeError, match="greater than 0"):
        frnn.pack_padded_sequence(x, [5, 2, 0])
    with pytest.raises(RuntimeError, match="equal to batch_size"):
        frnn.pack_padded_sequence(x, [5, 2])
    packed = frnn.pack_padded_sequence(x, [5, 2, 1])
    with pytest.raises(ValueError, match="at least the length of the longest"):
        frnn.pad_packed_sequence(packed, total_length=3)
    with pytest.raises(ValueError, match="left or right"):
        frnn.pad_sequence([x], padding_side="middle")


def test_packed_sequence_is_a_tuple_of_its_fields():
    packed = frnn.pack_sequence([fw.ones(3, 1), fw.ones(2, 1)])
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert data is packed.data and sorted_indices is None and unsorted_indices is None
    assert batch_sizes.tolist() == [2, 2, 1]
    assert packed.double().data.dtype == fw.float64 and not packed.is_cuda


CASES = [("RNN", {}), ("LSTM", {}), ("GRU", {}), ("LSTM", {"bidirectional": True}),
         ("GRU", {"num_layers": 2, "bidirectional": True}),
         ("RNN", {"num_layers": 2, "nonlinearity": "relu"}),
         ("LSTM", {"proj_size": 2, "bidirectional": True, "num_layers": 2}),
         ("LSTM", {"batch_first": True, "bias": False})]


@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("cls,options", CASES, ids=str)
def test_layers_over_packed_input(cls, options, enforce_sorted, with_state):
    ours = getattr(nn, cls)(IN, HID, **options).double()
    theirs = getattr(torch.nn, cls)(IN, HID, **options).double()
    copy_weights(ours, theirs)
    lengths = [6, 4, 4, 1] if enforce_sorted else [4, 6, 1, 4]
    batch_first = options.get("batch_first", False)
    x = rng.standard_normal((4, T, IN) if batch_first else (T, 4, IN))
    xs, xt = fw.tensor(x, requires_grad=True), torch.from_numpy(x).requires_grad_(True)
    d = (2 if options.get("bidirectional") else 1) * options.get("num_layers", 1)
    hx_ours = hx_theirs = None
    if with_state:
        h = rng.standard_normal((d, 4, options.get("proj_size") or HID))
        hx_ours, hx_theirs = fw.tensor(h), torch.from_numpy(h)
        if cls == "LSTM":
            c = rng.standard_normal((d, 4, HID))
            hx_ours, hx_theirs = (hx_ours, fw.tensor(c)), (hx_theirs, torch.from_numpy(c))
    out, state = ours(frnn.pack_padded_sequence(xs, lengths, batch_first, enforce_sorted),
                      hx_ours)
    out_t, state_t = theirs(trnn.pack_padded_sequence(xt, lengths, batch_first,
                                                      enforce_sorted), hx_theirs)
    assert isinstance(out, frnn.PackedSequence)
    _same_packed(out, out_t)
    states = state if cls == "LSTM" else (state,)
    states_t = state_t if cls == "LSTM" else (state_t,)
    for a, b in zip(states, states_t):
        _same(a, b)
    padded, _ = frnn.pad_packed_sequence(out, batch_first)
    padded_t, _ = trnn.pad_packed_sequence(out_t, batch_first)
    tensors = [padded, *states]
    tensors_t = [padded_t, *states_t]
    grads = [rng.standard_normal(tuple(t.shape)) for t in tensors_t]
    fw.autograd.backward(tensors, [fw.tensor(g) for g in grads])
    torch.autograd.backward(tensors_t, [torch.from_numpy(g) for g in grads])
    _same(xs.grad, xt.grad)
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        _same(p.grad, theirs_params[name].grad)


def test_packed_data_of_the_wrong_width_is_refused():
    packed = frnn.pack_sequence([fw.ones(3, IN + 1)])
    with pytest.raises(RuntimeError, match="input_size=3"):
        nn.GRU(IN, HID)(packed)
