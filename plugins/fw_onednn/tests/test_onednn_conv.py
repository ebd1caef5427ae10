"""Convolutions through fw_onednn: conv1d/conv2d, the transposed convolutions and the weight
gradients against fw_cpu's kernels and PyTorch over strides, padding, dilation, groups, biases
and memory layouts; gradients through autograd; what the guards leave to fw_cpu; and a small CNN
trained on fw_onednn equal to the same training on fw_cpu alone."""

import numpy as np
import pytest
import scipy.special

import fw_core as fw
import fw_onednn
from fw_core.testing import conformance as cf
from fw_core.testing.cases import conv as conv_cases
from fw_cpu.kernels import conv as cpu_conv
from fw_onednn import conv

torch = pytest.importorskip("torch")
F = torch.nn.functional
CPU = cpu_conv.kernels(np, scipy.special)

#: (x shape, weight shape, bias, stride, padding, dilation, groups) of conv1d/conv2d calls
CONVS = [
    ((2, 3, 7, 6), (4, 3, 3, 3), True, 1, 1, 1, 1),
    ((2, 3, 7, 6), (4, 3, 3, 3), False, 2, 0, 1, 1),
    ((2, 4, 9, 8), (6, 2, 3, 2), True, (2, 1), (1, 0), (1, 2), 2),
    ((2, 8, 6, 6), (8, 1, 3, 3), False, 1, 1, 1, 8),  # depthwise
    ((1, 16, 14, 14), (32, 16, 3, 3), True, 1, 1, 1, 1),  # the cnn's second layer, batch 1
    ((4, 1, 28, 28), (16, 1, 3, 3), True, 1, 1, 1, 1),  # the cnn's first layer
    ((2, 32, 9, 9), (16, 32, 1, 1), True, 1, 0, 1, 1),  # pointwise
    ((2, 5, 11, 10), (7, 5, 5, 3), False, 3, 2, 2, 1),
    ((3, 5, 6), (2, 3, 3, 3), False, 1, 1, 1, 1),  # unbatched
    ((2, 3, 20), (4, 3, 5), True, 2, 2, 1, 1),  # 1-d
    ((2, 6, 17), (6, 2, 3), False, 1, 2, 3, 3),
    ((5, 9), (4, 5, 2), True, 1, 0, 1, 1),  # unbatched 1-d
]


def _conv_args(case):
    x_shape, w_shape, bias, stride, padding, dilation, groups = case
    n = len(w_shape) - 2
    return n, {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}


def _draw(rng, *shapes):
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _pairs(value, n):
    values = (value,) * n if isinstance(value, int) else tuple(value)
    return tuple((v, v) for v in values)


def _fw_attrs(n, kw):
    one = lambda v: (v,) * n if isinstance(v, int) else tuple(v)
    return {"stride": one(kw["stride"]), "padding": _pairs(kw["padding"], n),
            "dilation": one(kw["dilation"]), "groups": kw["groups"]}


@pytest.mark.parametrize("case", CONVS, ids=str)
def test_convolution_matches_fw_cpu_and_torch(rng, case):
    n, kw = _conv_args(case)
    x, w, b = _draw(rng, case[0], case[1], (case[1][0],))
    operands = (x, w, b) if case[2] else (x, w)
    fn = getattr(fw, f"conv{n}d")
    got = fn(*(fw.from_numpy(a) for a in operands), **kw).numpy()
    theirs = getattr(F, f"conv{n}d")(*(torch.from_numpy(a) for a in operands), **kw).numpy()
    reference = CPU[f"conv{n}d"](*operands, **_fw_attrs(n, kw))
    np.testing.assert_allclose(got, reference, rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(got, theirs, rtol=1e-5, atol=2e-5)
    assert getattr(conv, f"takes_conv{n}d")(*operands, **_fw_attrs(n, kw))


@pytest.mark.parametrize("case", CONVS, ids=str)
def test_gradients_match_torch(rng, case):
    n, kw = _conv_args(case)
    values = _draw(rng, case[0], case[1], (case[1][0],))[:3 if case[2] else 2]
    ours = [fw.from_numpy(v).requires_grad_(True) for v in values]
    theirs = [torch.from_numpy(v.copy()).requires_grad_(True) for v in values]
    out = getattr(fw, f"conv{n}d")(*ours, **kw)
    expected = getattr(F, f"conv{n}d")(*theirs, **kw)
    cotangent = rng.standard_normal(tuple(out.shape)).astype(np.float32)
    out.backward(fw.tensor(cotangent))
    expected.backward(torch.from_numpy(cotangent))
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-4)
    kinds = fw_onednn.cache_info().by_kind
    assert kinds[f"conv_transpose{n}d:f32"] and kinds[f"conv{n}d_weight_grad:f32"]


#: (x shape, weight shape, bias, stride, padding, output_padding, dilation, groups)
TRANSPOSED = [
    ((2, 3, 4, 4), (3, 2, 3, 3), True, 1, 0, 0, 1, 1),
    ((2, 3, 5, 4), (3, 2, 3, 3), True, 2, 1, 1, 1, 1),
    ((2, 3, 5, 4), (3, 2, 3, 3), False, 2, 1, (0, 1), 1, 1),
    ((2, 4, 3, 3), (4, 1, 2, 3), True, (1, 2), 0, 0, 2, 2),
    ((2, 16, 7, 7), (16, 8, 4, 4), True, 2, 1, 0, 1, 1),
    ((3, 4, 4), (3, 2, 2, 2), False, 2, 0, 1, 1, 1),  # unbatched
    ((2, 3, 5), (3, 2, 3), True, 2, 1, 1, 1, 1),  # 1-d
    ((2, 4, 6), (4, 3, 4), False, 3, 2, 2, 2, 2),
]


@pytest.mark.parametrize("case", TRANSPOSED, ids=str)
def test_transposed_convolution_matches_fw_cpu_and_torch(rng, case):
    x_shape, w_shape, bias, stride, padding, extra, dilation, groups = case
    n = len(w_shape) - 2
    x, w, b = _draw(rng, x_shape, w_shape, (w_shape[1] * groups,))
    operands = (x, w, b) if bias else (x, w)
    kw = {"stride": stride, "padding": padding, "output_padding": extra, "groups": groups,
          "dilation": dilation}
    fn = getattr(fw, f"conv_transpose{n}d")
    got = fn(*(fw.from_numpy(a) for a in operands), **kw).numpy()
    theirs = getattr(F, f"conv_transpose{n}d")(*(torch.from_numpy(a) for a in operands),
                                               **kw).numpy()
    one = lambda v: (v,) * n if isinstance(v, int) else tuple(v)
    attrs = {**_fw_attrs(n, kw), "output_padding": one(extra)}
    reference = CPU[f"conv_transpose{n}d"](*operands, **attrs)
    np.testing.assert_allclose(got, reference, rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(got, theirs, rtol=1e-5, atol=2e-5)
    assert getattr(conv, f"takes_conv_transpose{n}d")(*operands, **attrs)


@pytest.mark.parametrize("case", CONVS, ids=str)
def test_weight_gradient_matches_fw_cpu(rng, case):
    n, kw = _conv_args(case)
    attrs = _fw_attrs(n, kw)
    x = _draw(rng, case[0])[0]
    out_shape = CPU[f"conv{n}d"](x, _draw(rng, case[1])[0], **attrs).shape
    (g,) = _draw(rng, out_shape)
    attrs["kernel_size"] = tuple(case[1][2:])
    got = fw.ops.apply(fw.ops.get(f"conv{n}d_weight_grad"), (fw.from_numpy(x), fw.from_numpy(g)),
                       attrs).numpy()
    # sums over batch and positions (3136 products for the first layer): float32 rounding
    reference = CPU[f"conv{n}d_weight_grad"](x.astype(np.float64), g.astype(np.float64), **attrs)
    np.testing.assert_allclose(got, reference, rtol=1e-4, atol=5e-4)
    assert getattr(conv, f"takes_conv{n}d_weight_grad")(x, g, **attrs)


def test_the_blocked_layouts_are_used_and_a_one_channel_input_is_read_in_place(rng):
    attrs = {"stride": (1, 1), "padding": ((1, 1), (1, 1)), "dilation": (1, 1), "groups": 1}
    x, w = _draw(rng, (8, 16, 14, 14), (32, 16, 3, 3))
    assert conv.takes_conv2d(x, w, **attrs)
    assert conv._found.entry.reorders == ("src", "weights", "dst")
    x, w = _draw(rng, (8, 1, 28, 28), (16, 1, 3, 3))
    assert conv.takes_conv2d(x, w, **attrs)
    assert conv._found.entry.reorders == ("weights", "dst")


def test_strided_and_transposed_views_match_fw_cpu(rng):
    x, w, b = _draw(rng, (2, 4, 9, 8), (6, 4, 3, 3), (6,))
    attrs = {"stride": (1, 1), "padding": ((1, 1), (1, 1)), "dilation": (1, 1), "groups": 1}
    views = {"swapped": np.ascontiguousarray(x.swapaxes(-1, -2)).swapaxes(-1, -2),
             "channels_last": np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2),
             "every_other_channel": np.repeat(x, 2, axis=1)[:, ::2]}
    strided_bias = np.repeat(b, 2)[::2]
    for name, view in views.items():
        assert conv.takes_conv2d(view, w, strided_bias, **attrs), name
        got = fw.conv2d(fw.from_numpy(view), fw.from_numpy(w), fw.from_numpy(strided_bias),
                        padding=1).numpy()
        np.testing.assert_allclose(got, CPU["conv2d"](x, w, b, **attrs), rtol=1e-5, atol=2e-5,
                                   err_msg=name)


@pytest.mark.parametrize("name, make", [
    ("float64", lambda x, w: (x.astype(np.float64), w.astype(np.float64))),
    ("float16", lambda x, w: (x.astype(np.float16), w.astype(np.float16))),
    ("empty batch", lambda x, w: (x[:0], w)),
    ("columns skipped: no nesting oneDNN describes", lambda x, w: (x[..., ::2], w)),
    ("reversed", lambda x, w: (x[..., ::-1], w)),
    ("broadcast", lambda x, w: (np.broadcast_to(x[:1], x.shape), w)),
])
def test_what_the_guard_refuses_runs_on_fw_cpu(rng, name, make):
    x, w = make(*_draw(rng, (2, 3, 8, 7), (4, 3, 3, 3)))
    attrs = {"stride": (1, 1), "padding": ((1, 1), (1, 1)), "dilation": (1, 1), "groups": 1}
    assert not conv.takes_conv2d(x, w, **attrs)
    got = fw.conv2d(fw.from_numpy(x), fw.from_numpy(w), padding=1).numpy()
    np.testing.assert_array_equal(got, CPU["conv2d"](x, w, **attrs))


def test_a_mixed_dtype_bias_is_refused_and_fw_says_why(rng):
    x, w = _draw(rng, (2, 3, 8, 7), (4, 3, 3, 3))
    attrs = {"stride": (1, 1), "padding": ((0, 0), (0, 0)), "dilation": (1, 1), "groups": 1}
    assert not conv.takes_conv2d(x, w, np.zeros(4), **attrs)
    with pytest.raises(fw.errors.DTypeError, match="bias"):
        fw.conv2d(fw.from_numpy(x), fw.from_numpy(w), fw.from_numpy(np.zeros(4)))


def test_shapes_fw_rejects_are_refused_so_fw_cpu_raises_fws_error(rng):
    x, w = _draw(rng, (2, 3, 8, 7), (4, 2, 3, 3))
    attrs = {"stride": (1, 1), "padding": ((0, 0), (0, 0)), "dilation": (1, 1), "groups": 1}
    assert not conv.takes_conv2d(x, w, **attrs)
    with pytest.raises(fw.errors.ShapeError, match="channels"):
        fw.conv2d(fw.from_numpy(x), fw.from_numpy(w))


def test_gradcheck_in_float64_runs_on_fw_cpu(rng):
    x = fw.from_numpy(rng.standard_normal((1, 2, 5, 5))).requires_grad_(True)
    w = fw.from_numpy(rng.standard_normal((3, 2, 3, 3))).requires_grad_(True)
    assert fw.autograd.gradcheck(lambda a, b: fw.conv2d(a, b, padding=1, stride=2), (x, w))
    assert fw_onednn.cache_info().misses == 0  # refused before oneDNN was asked


@pytest.mark.parametrize("case", [c for c in conv_cases.CASES if c.op.startswith("conv")],
                         ids=lambda c: c.id)
def test_the_conformance_cases_pass_through_onednn(case):
    cf.check_forward(fw, case, "cpu", "float32")
    cf.check_forward(fw, case, "cpu", "float32", noncontiguous=True)
    if case.torch:
        cf.check_torch(fw, torch, case, "float32")


def test_the_conformance_cases_were_served_by_onednn():
    cases = [c for c in conv_cases.CASES if c.op.startswith("conv")]
    for case in cases:
        cf.check_forward(fw, case, "cpu", "float32")
    info = fw_onednn.cache_info()
    # refused: the empty batch, and the transposed case whose output_padding spans two strides
    assert info.size - info.refusals >= len(cases) - 2


def _cnn():
    nn = fw.nn
    fw.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1, groups=2), nn.ReLU(),
                         nn.ConvTranspose2d(16, 8, 2, stride=2), nn.ReLU(),
                         nn.AvgPool2d(2), nn.Conv2d(8, 8, 3, stride=2, dilation=2), nn.ReLU(),
                         nn.Flatten(), nn.Linear(8 * 2 * 2, 10))


def _train(steps, images, labels):
    model = _cnn()
    optimizer = fw.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x, y = fw.from_numpy(images), fw.from_numpy(labels)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = fw.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def test_a_small_cnn_trains_as_it_does_on_fw_cpu_alone(rng):
    images = rng.standard_normal((16, 1, 14, 14)).astype(np.float32)
    labels = rng.integers(0, 10, 16)
    losses, weights = _train(5, images, labels)
    kinds = fw_onednn.cache_info().by_kind
    for kind in ("conv2d+bias:f32", "conv_transpose2d+bias:f32", "conv_transpose2d:f32",
                 "conv2d_weight_grad:f32", "max_pool2d:f32", "max_pool2d_indices:f32",
                 "avg_pool2d:f32", "avg_pool2d_backward:f32"):
        assert kinds.get(kind), kind
    fw.plugins.use([i.name for i in fw.plugins.info() if i.name not in ("fw_core", "fw_onednn")])
    try:
        alone, reference = _train(5, images, labels)
    finally:
        fw.plugins.use(None)
    np.testing.assert_allclose(losses, alone, rtol=1e-5)
    assert losses[-1] < losses[0]
    for ours, theirs in zip(weights, reference):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


def test_the_dispatch_table_names_fw_onednn_and_what_its_guards_take():
    rows = {r["op"]: r for r in fw.plugins.dispatch_table() if r["device"] == "cpu"}
    for op, _, _, takes in conv.KERNELS:
        assert rows[op]["plugin"] == "fw_onednn"
        assert f"fw_onednn when it takes the call ({takes}), " in rows[op]["why"]
        assert ", else fw_cpu" in rows[op]["why"]
