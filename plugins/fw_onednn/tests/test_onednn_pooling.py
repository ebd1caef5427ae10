"""Pooling through fw_onednn: max pooling's values and indices exactly as fw_cpu's (ties and
windows of lowest floats included, inputs with NaN or -inf left to fw_cpu), average and adaptive
average pooling and their backward passes to float32 rounding, gradients through autograd, and
what the guards refuse."""

import numpy as np
import pytest
import scipy.special

import fw_core as fw
import fw_onednn
from fw_core.testing import conformance as cf
from fw_core.testing.cases import conv as conv_cases
from fw_core.testing.cases import pooling as pooling_cases
from fw_cpu.kernels import pooling as cpu_pooling
from fw_onednn import pooling

torch = pytest.importorskip("torch")
F = torch.nn.functional
CPU = cpu_pooling.kernels(np, scipy.special)

#: (input shape, kernel_size, stride, padding, dilation, ceil_mode)
WINDOWS = [
    ((2, 16, 28, 28), (2, 2), (2, 2), (0, 0), (1, 1), False),  # the cnn's pools
    ((2, 32, 14, 14), (2, 2), (2, 2), (0, 0), (1, 1), False),
    ((2, 3, 7, 9), (3, 3), (2, 2), (1, 1), (1, 1), False),
    ((2, 3, 7, 9), (3, 2), (2, 1), (1, 1), (1, 1), True),
    ((2, 4, 6, 5), (3, 3), (2, 2), (0, 0), (1, 1), True),
    ((1, 5, 8, 8), (2, 3), (1, 2), (1, 0), (1, 1), False),
    ((3, 9, 10), (2, 2), (2, 2), (0, 0), (1, 1), True),  # unbatched
]


def _attrs(window):
    _, kernel, stride, padding, dilation, ceil_mode = window
    return {"kernel_size": kernel, "stride": stride, "padding": padding, "dilation": dilation,
            "ceil_mode": ceil_mode}


@pytest.mark.parametrize("window", WINDOWS, ids=str)
def test_max_pooling_values_and_indices_are_fw_cpus(rng, window):
    x = rng.standard_normal(window[0]).astype(np.float32)
    attrs = _attrs(window)
    values, indices = fw.max_pool2d(fw.from_numpy(x), **{**attrs, "return_indices": True})
    np.testing.assert_array_equal(values.numpy(), CPU["max_pool2d"](x, **attrs))
    np.testing.assert_array_equal(indices.numpy(), CPU["max_pool2d_indices"](x, **attrs))
    assert pooling.takes_max_pool2d(x, **attrs) and pooling.takes_max_pool2d_indices(x, **attrs)


@pytest.mark.parametrize("window", WINDOWS, ids=str)
def test_ties_pick_fw_cpus_element(rng, window):
    x = rng.integers(0, 3, window[0]).astype(np.float32)  # many equal maxima per window
    attrs = _attrs(window)
    got = fw.max_pool2d(fw.from_numpy(x), **{**attrs, "return_indices": True})[1].numpy()
    np.testing.assert_array_equal(got, CPU["max_pool2d_indices"](x, **attrs))


def test_windows_of_lowest_floats_point_inside_the_input_as_fw_cpu_does():
    x = np.full((1, 16, 5, 5), np.finfo(np.float32).min, np.float32)
    x[0, :, 2, 2] = 1.0
    attrs = {"kernel_size": (3, 3), "stride": (2, 2), "padding": (1, 1), "dilation": (1, 1),
             "ceil_mode": True}
    assert pooling.takes_max_pool2d_indices(x, **attrs)
    got = fw.max_pool2d(fw.from_numpy(x), **{**attrs, "return_indices": True})
    np.testing.assert_array_equal(got[0].numpy(), CPU["max_pool2d"](x, **attrs))
    np.testing.assert_array_equal(got[1].numpy(), CPU["max_pool2d_indices"](x, **attrs))


@pytest.mark.parametrize("bad, served", [(np.nan, False), (-np.inf, False), (np.inf, True)])
def test_nan_and_minus_infinity_go_to_fw_cpu(rng, bad, served):
    x = rng.standard_normal((2, 16, 6, 6)).astype(np.float32)
    x[0, 3, 1, 1] = bad
    x[1, :, :2, :2] = bad  # a whole window
    attrs = _attrs(WINDOWS[0])
    assert pooling.takes_max_pool2d(x, **attrs) == served
    assert pooling.takes_max_pool2d_indices(x, **attrs) == served
    values, indices = fw.max_pool2d(fw.from_numpy(x), 2, return_indices=True)
    np.testing.assert_array_equal(values.numpy(), CPU["max_pool2d"](x, **attrs))
    np.testing.assert_array_equal(indices.numpy(), CPU["max_pool2d_indices"](x, **attrs))


@pytest.mark.parametrize("window", WINDOWS, ids=str)
def test_max_pooling_gradient_is_fw_cpus(rng, window):
    x = rng.standard_normal(window[0]).astype(np.float32)
    t = fw.from_numpy(x).requires_grad_(True)
    attrs = _attrs(window)
    out = fw.max_pool2d(t, **attrs)
    g = rng.standard_normal(tuple(out.shape)).astype(np.float32)
    out.backward(fw.tensor(g))
    indices = CPU["max_pool2d_indices"](x, **attrs)
    expected = CPU["max_pool2d_backward"](g, indices, input_size=x.shape[-2:])
    np.testing.assert_array_equal(t.grad.numpy(), expected)
    theirs = torch.from_numpy(x).requires_grad_(True)
    F.max_pool2d(theirs, **attrs).backward(torch.from_numpy(g))
    # where windows overlap, PyTorch sums in float32 and fw_cpu in float64
    np.testing.assert_allclose(t.grad.numpy(), theirs.grad.numpy(), rtol=1e-6, atol=1e-7)


#: (input shape, kernel_size, stride, padding, ceil_mode, count_include_pad)
AVERAGES = [
    ((2, 16, 28, 28), (2, 2), (2, 2), (0, 0), False, True),
    ((2, 3, 7, 9), (3, 3), (2, 2), (1, 1), False, True),
    ((2, 3, 7, 9), (3, 3), (2, 2), (1, 1), False, False),
    ((2, 3, 7, 9), (3, 2), (2, 1), (1, 1), True, False),
    ((2, 4, 6, 6), (3, 3), (3, 3), (0, 0), True, True),  # ceil_mode without an overhang
    ((3, 9, 10), (2, 3), (1, 2), (0, 1), False, True),  # unbatched
]


def _average(window):
    _, kernel, stride, padding, ceil_mode, include = window
    return {"kernel_size": kernel, "stride": stride, "padding": padding, "ceil_mode": ceil_mode,
            "count_include_pad": include, "divisor_override": None}


@pytest.mark.parametrize("window", AVERAGES, ids=str)
def test_average_pooling_and_its_gradient_match_fw_cpu_and_torch(rng, window):
    x = rng.standard_normal(window[0]).astype(np.float32)
    attrs = _average(window)
    t = fw.from_numpy(x).requires_grad_(True)
    out = fw.avg_pool2d(t, **{k: v for k, v in attrs.items()})
    np.testing.assert_allclose(out.detach().numpy(), CPU["avg_pool2d"](x, **attrs), rtol=1e-6,
                               atol=1e-6)
    g = rng.standard_normal(tuple(out.shape)).astype(np.float32)
    out.backward(fw.tensor(g))
    expected = CPU["avg_pool2d_backward"](g, input_size=x.shape[-2:], **attrs)
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-6, atol=1e-6)
    theirs = torch.from_numpy(x).requires_grad_(True)
    torch_attrs = {k: v for k, v in attrs.items() if k != "divisor_override"}
    F.avg_pool2d(theirs, **torch_attrs).backward(torch.from_numpy(g))
    np.testing.assert_allclose(t.grad.numpy(), theirs.grad.numpy(), rtol=1e-6, atol=1e-6)
    assert pooling.takes_avg_pool2d(x, **attrs)
    assert pooling.takes_avg_pool2d_backward(g, input_size=x.shape[-2:], **attrs)


@pytest.mark.parametrize("name, change", [
    ("divisor_override", {"divisor_override": 3}),
    ("an overhang counted in the divisor", {"ceil_mode": True, "count_include_pad": True}),
])
def test_divisors_onednn_does_not_have_go_to_fw_cpu(rng, name, change):
    x = rng.standard_normal((2, 3, 6, 8)).astype(np.float32)  # ceil_mode adds a window
    attrs = {**_average(AVERAGES[1]), **change}
    assert not pooling.takes_avg_pool2d(x, **attrs), name
    got = fw.avg_pool2d(fw.from_numpy(x), **attrs).numpy()
    np.testing.assert_array_equal(got, CPU["avg_pool2d"](x, **attrs))


@pytest.mark.parametrize("shape, size, served", [
    ((2, 32, 7, 7), (1, 1), True), ((2, 16, 12, 8), (3, 4), True), ((4, 6, 6), (2, 3), True),
    ((2, 3, 5, 7), (3, 4), False), ((2, 3, 3, 2), (5, 3), False),
])
def test_adaptive_average_pooling_is_served_when_the_bins_are_equal(rng, shape, size, served):
    x = rng.standard_normal(shape).astype(np.float32)
    assert pooling.takes_adaptive_avg_pool2d(x, output_size=size) == served
    t = fw.from_numpy(x).requires_grad_(True)
    out = fw.adaptive_avg_pool2d(t, size)
    np.testing.assert_allclose(out.detach().numpy(),
                               CPU["adaptive_avg_pool2d"](x, output_size=size), rtol=1e-6,
                               atol=1e-6)
    g = rng.standard_normal(tuple(out.shape)).astype(np.float32)
    out.backward(fw.tensor(g))
    expected = CPU["adaptive_avg_pool2d_backward"](g, input_size=shape[-2:], output_size=size)
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-6, atol=1e-6)
    assert pooling.takes_adaptive_avg_pool2d_backward(g, input_size=shape[-2:],
                                                      output_size=size) == served


@pytest.mark.parametrize("name, make", [
    ("float64", lambda x: x.astype(np.float64)),
    ("int32", lambda x: (x * 10).astype(np.int32)),
    ("empty", lambda x: x[:0]),
    ("last two axes swapped in memory (oneDNN has only reference loops)",
     lambda x: np.ascontiguousarray(x.swapaxes(-1, -2)).swapaxes(-1, -2)),
])
def test_what_the_guards_refuse_runs_on_fw_cpu(rng, name, make):
    x = make(rng.standard_normal((2, 16, 6, 6)).astype(np.float32))
    attrs = _attrs(WINDOWS[0])
    assert not pooling.takes_max_pool2d(x, **attrs), name
    np.testing.assert_array_equal(fw.max_pool2d(fw.from_numpy(x), 2).numpy(),
                                  CPU["max_pool2d"](x, **attrs))


def test_gradcheck_in_float64_runs_on_fw_cpu(rng):
    x = fw.from_numpy(rng.standard_normal((1, 2, 5, 5))).requires_grad_(True)
    assert fw.autograd.gradcheck(lambda a: fw.avg_pool2d(a, 3, 2, 1), (x,))
    assert fw.autograd.gradcheck(lambda a: fw.max_pool2d(a, 2, 1), (x,))
    assert fw_onednn.cache_info().misses == 0


POOLS = [c for c in conv_cases.CASES + pooling_cases.CASES if "pool" in c.op]


@pytest.mark.parametrize("case", POOLS, ids=lambda c: c.id)
def test_the_conformance_cases_pass_through_onednn(case):
    if "float32" in case.dtypes:
        cf.check_forward(fw, case, "cpu", "float32")
        cf.check_forward(fw, case, "cpu", "float32", noncontiguous=True)
        if case.torch:
            cf.check_torch(fw, torch, case, "float32")


def test_the_conformance_cases_were_served_by_onednn():
    for case in POOLS:
        if "float32" in case.dtypes:
            cf.check_forward(fw, case, "cpu", "float32")
    kinds = fw_onednn.cache_info().by_kind
    for kind in (pooling.MAX, pooling.INDICES, pooling.AVG, pooling.AVG_BACKWARD,
                 pooling.ADAPTIVE):
        assert kinds.get(kind), kind


def test_the_dispatch_table_names_fw_onednn_and_leaves_the_scatter_to_fw_cpu():
    rows = {r["op"]: r for r in fw.plugins.dispatch_table() if r["device"] == "cpu"}
    for op, _, _, takes in pooling.KERNELS:
        assert rows[op]["plugin"] == "fw_onednn"
        assert f"fw_onednn when it takes the call ({takes}), " in rows[op]["why"]
        assert ", else fw_cpu" in rows[op]["why"]
    assert rows["max_pool2d_backward"]["plugin"] == rows["max_pool2d_select"]["plugin"] == \
        "fw_cpu"
