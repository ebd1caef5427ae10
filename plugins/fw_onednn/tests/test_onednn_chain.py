"""fw_onednn's chain rule (``onednn.blocked_chain``): convolutions, poolings and activations
as one oneDNN program with blocked values between them. Compiled chains equal eager, fw_cpu and
PyTorch (forward, and gradients of compiled training); weights changed in place are read anew;
what oneDNN cannot take runs the nodes one by one; the decision is measured and logged."""

import numpy as np
import pytest
import torch

import fw_core as fw
import fw_onednn
from fw_core.compile.passes import fuse as fuse_pass
from fw_onednn import chain

F = fw.nn.functional


@pytest.fixture
def scheduler():
    """Compile on the first call and keep every fused group, whatever its speed on these small
    shapes."""
    fw.scheduler.reset()
    fw.scheduler.configure(compile_after=0, fusion="always")
    yield fw.scheduler
    fw.scheduler.reset()


def _tensor(rng, *shape):
    return fw.from_numpy(rng.standard_normal(shape).astype(np.float32))


def _chains(compiled) -> list:
    """The chain groups in every plan of ``compiled``."""
    return [step for plan in compiled.plans() for step in plan.graph.steps
            if step.__class__.__name__ == "Group" and step.rule.name == chain.NAME]


def _fuse_log(compiled) -> str:
    """What the fusion pass said about the first plan of ``compiled``."""
    return next(line for line in compiled.plans()[0].graph.log if line.startswith("fuse:"))


def _ops(group) -> str:
    return "+".join(n.op.name for n in group.nodes)


def _fw_cpu_alone(fn, *args):
    """``fn(*args)`` eager with fw_cpu serving every op."""
    fw.plugins.use([i.name for i in fw.plugins.info() if i.name not in ("fw_core", "fw_onednn")])
    try:
        with fw.no_grad():
            return fn(*args).numpy()
    finally:
        fw.plugins.use(None)


def _features(x, w1, b1, w2):
    """The cnn workload's feature extractor, its second convolution without a bias."""
    h = F.max_pool2d(fw.relu(F.conv2d(x, w1, b1, padding=1)), 2)
    return F.max_pool2d(fw.relu(F.conv2d(h, w2, padding=1)), 2)


def _torch_features(x, w1, b1, w2):
    tf = torch.nn.functional
    h = tf.max_pool2d(torch.relu(tf.conv2d(x, w1, b1, padding=1)), 2)
    return tf.max_pool2d(torch.relu(tf.conv2d(h, w2, padding=1)), 2)


#: name -> (fn(rng) -> (function, arguments), the chain's ops)
PATTERNS = {
    "cnn features": (lambda r: (_features, (_tensor(r, 3, 1, 28, 28), _tensor(r, 16, 1, 3, 3),
                                            _tensor(r, 16), _tensor(r, 32, 16, 3, 3))),
                     "conv2d+relu+max_pool2d+conv2d+relu+max_pool2d"),
    "odd channels, groups, stride, dilation": (
        lambda r: (lambda x, w, b: fw.sigmoid(F.conv2d(x, w, b, stride=2, dilation=2, groups=2,
                                                       padding=2)),
                   (_tensor(r, 2, 6, 13, 11), _tensor(r, 10, 3, 3, 3), _tensor(r, 10))),
        "conv2d+sigmoid"),
    "average pooling, ceil_mode, padding excluded": (
        lambda r: (lambda x, w: F.avg_pool2d(F.leaky_relu(F.conv2d(x, w), 0.1), 3, 2, 1, True,
                                             False),
                   (_tensor(r, 2, 4, 12, 12), _tensor(r, 16, 4, 3, 3))),
        "conv2d+leaky_relu+avg_pool2d"),
    "activation first, on the caller's array": (
        lambda r: (lambda x: F.max_pool2d(fw.relu(x), 2), (_tensor(r, 2, 16, 8, 8),)),
        "relu+max_pool2d"),
    "pool then convolution": (
        lambda r: (lambda x, w: fw.relu(F.conv2d(F.avg_pool2d(x, 2), w, padding=1)),
                   (_tensor(r, 1, 32, 8, 8), _tensor(r, 16, 32, 3, 3))),
        "avg_pool2d+conv2d+relu"),
}


@pytest.mark.parametrize("name", PATTERNS)
def test_a_chain_compiled_equals_eager_and_fw_cpu(rng, scheduler, name):
    make, ops = PATTERNS[name]
    fn, args = make(rng)
    compiled = fw.compile(fn)
    with fw.no_grad():
        want = fn(*args).numpy()
        for _ in range(2):
            np.testing.assert_allclose(compiled(*args).numpy(), want, rtol=1e-5, atol=2e-6)
    # fw's float32 tolerance: oneDNN sums each window in its own order, over two layers here
    np.testing.assert_allclose(want, _fw_cpu_alone(fn, *args), rtol=1e-4, atol=1e-5)
    [group] = _chains(compiled)
    assert _ops(group) == ops and group.structure == "chain"
    assert fw_onednn.cache_info().by_kind.get(chain.KIND), "oneDNN ran the chain"


def test_the_cnn_features_match_torch(rng, scheduler):
    fn, args = PATTERNS["cnn features"][0](rng)
    compiled = fw.compile(fn)
    with fw.no_grad():
        compiled(*args)
        got = compiled(*args).numpy()
    want = _torch_features(*(torch.from_numpy(a.numpy()) for a in args)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def _cnn():
    nn = fw.nn
    fw.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 3 * 3, 10))


def _training(compiled: bool, images, labels, steps: int = 4):
    model = _cnn()
    optimizer = fw.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def step(x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    run = fw.compile(step) if compiled else step
    x, y = fw.from_numpy(images), fw.from_numpy(labels)
    losses, weights = [], []
    for _ in range(steps):
        losses.append(run(x, y).item())
        weights.append([p.detach().numpy().copy() for p in model.parameters()])
    return losses, weights, run


def test_compiled_training_equals_eager_step_by_step(rng, scheduler):
    """Every step reads the weights the optimizer just wrote: a stale reorder would show."""
    images = rng.standard_normal((8, 1, 12, 12)).astype(np.float32)
    labels = rng.integers(0, 10, 8)
    losses, weights, compiled = _training(True, images, labels)
    eager_losses, eager_weights, _ = _training(False, images, labels)
    [group] = _chains(compiled)
    assert _ops(group) == "conv2d+relu+max_pool2d+conv2d+relu+max_pool2d"
    assert len(group.outputs) > 1  # the backward reads the chain's inner values
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    assert losses[-1] < losses[0]
    for ours, theirs in zip(weights, eager_weights):
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def _kernel(rng, scheduler):
    """The chain kernel of the cnn features, and arrays to call it with."""
    fn, args = PATTERNS["cnn features"][0](rng)
    compiled = fw.compile(fn)
    with fw.no_grad():
        compiled(*args)
    [group] = _chains(compiled)
    return group.kernel, [a.numpy() for a in args], fn, args


def test_a_weight_changed_in_place_is_read_anew(rng, scheduler):
    kernel, arrays, fn, args = _kernel(rng, scheduler)
    kernel(*arrays)
    args[3].numpy()[...] *= -0.5  # what an optimizer step does to a parameter's array
    [got] = kernel(*arrays)
    np.testing.assert_allclose(got, _fw_cpu_alone(fn, *args), rtol=1e-4, atol=1e-5)


def test_the_kernel_writes_into_the_buffers_it_is_given(rng, scheduler):
    kernel, arrays, _, _ = _kernel(rng, scheduler)
    [want] = kernel(*arrays)
    buffer = np.empty_like(want)
    [got] = kernel(*arrays, out=(buffer,))
    assert got is buffer
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("spoil", ["nan in the input", "inf in a weight", "reversed view"])
def test_what_onednn_cannot_take_runs_the_nodes_one_by_one(rng, scheduler, spoil):
    kernel, arrays, _, _ = _kernel(rng, scheduler)
    if spoil == "nan in the input":
        arrays[0][0, 0, 3, 4] = np.nan
    elif spoil == "inf in a weight":
        arrays[1][2, 0, 1, 1] = np.inf
    else:
        arrays[0] = arrays[0][:, :, ::-1]  # a negative stride oneDNN cannot describe
    [got] = kernel(*arrays)
    [want] = kernel.unfused(arrays)
    np.testing.assert_array_equal(got, want)
    if spoil != "reversed view":
        assert np.isnan(got).any()  # fw's relu and max pooling carry NaN on, oneDNN's would not


def test_a_window_onednn_would_count_differently_runs_the_nodes_one_by_one(rng, scheduler):
    """count_include_pad with a ceil_mode window past the padding: oneDNN counts the overhang."""
    fn = lambda x: F.avg_pool2d(fw.relu(x), 3, 2, 1, True, True)  # noqa: E731
    x = _tensor(rng, 1, 16, 8, 8)
    compiled = fw.compile(fn)
    with fw.no_grad():
        np.testing.assert_allclose(compiled(x).numpy(), _fw_cpu_alone(fn, x), rtol=1e-6)
    [group] = _chains(compiled)
    layout = (((1, 16, 8, 8), x.numpy().strides),)
    assert "overhang" in chain.build(group.kernel, layout).reason


def test_a_chain_of_activations_alone_is_left_to_the_pointwise_rules(rng, scheduler):
    fn = lambda x: fw.sigmoid(fw.relu(x))  # noqa: E731
    compiled = fw.compile(fn)
    with fw.no_grad():
        compiled(_tensor(rng, 2, 16, 4, 4))
    assert not _chains(compiled)
    assert "relu+sigmoid: no rule generates it" in _fuse_log(compiled)


def test_a_member_reading_another_members_value_as_a_weight_is_declined():
    from fw_core.compile.ir import Group, Node, Value

    x = Value(0, (2, 4, 4, 4), np.float32, "input")
    relu = Node(fw.ops.get("relu"), (x,), {}, Value(1, (2, 4, 4, 4), np.float32, "node"), "",
                "forward")
    attrs = {"stride": (1, 1), "padding": ((0, 0), (0, 0)), "dilation": (1, 1), "groups": 1}
    conv = Node(fw.ops.get("conv2d"), (relu.out, relu.out, None), attrs,
                Value(2, (2, 2, 1, 1), np.float32, "node"), "", "forward")
    assert chain.generate(Group([relu, conv], [x], [conv.out], structure="chain")) is None


@pytest.mark.parametrize("op, attrs, taken", [
    ("gelu", {"approximate": "none"}, False),  # oneDNN overflows from 2**127: no input check
    ("gelu", {"approximate": "tanh"}, True),
    ("avg_pool2d", {"divisor_override": 3}, False),
    ("tanh", {}, False),  # not served by fw_onednn
])
def test_what_a_chain_supports(op, attrs, taken):
    from fw_core.compile.ir import Node, Value

    x = Value(0, (2, 16, 4, 4), np.float32, "input")
    node = Node(fw.ops.get(op), (x,), attrs, Value(1, (2, 16, 4, 4), np.float32, "node"), "",
                "forward")
    assert chain.supports(node) is taken


def test_the_decision_is_measured_and_logged(rng):
    fw.scheduler.reset()
    fw.scheduler.configure(compile_after=0)
    fuse_pass.clear_kernel_cache()
    try:
        fn, args = PATTERNS["cnn features"][0](rng)
        compiled = fw.compile(fn)
        with fw.no_grad():
            compiled(*args)
        log = _fuse_log(compiled)
        assert "conv2d+relu+max_pool2d+conv2d+relu+max_pool2d" in log
        assert " ms vs " in log or "not chosen (fused " in log
    finally:
        fw.scheduler.reset()


def test_the_program_says_what_it_reorders(rng, scheduler):
    kernel, arrays, _, _ = _kernel(rng, scheduler)
    layout = tuple((a.shape, a.strides) for a in arrays)
    program = chain.build(kernel, layout)
    # the one-channel input is read in place; between the layers no reorder but the
    # second convolution's weights; one out, into the plain result
    assert program.reorders == ("weights", "weights", "max_pool2d out")
    assert " > " in program.impl and len(program.out_shape) == 1
