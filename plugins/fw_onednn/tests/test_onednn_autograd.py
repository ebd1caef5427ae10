"""Autograd with fw_onednn loaded: float32 gradients of matmul, bmm and linear against PyTorch,
gradcheck in float64 (served by fw_cpu: the guard refuses float64), and an MLP's training step
equal to the same step on fw_cpu alone."""

import numpy as np
import pytest

import fw_core as fw
import fw_onednn

torch = pytest.importorskip("torch")


def _pair(rng, *shapes, transpose=()):
    """fw and torch leaves of these shapes (float32); operands named in ``transpose`` are
    transposed views of contiguous arrays, as attention's k.transpose(-1, -2) is."""
    ours, theirs = [], []
    for i, shape in enumerate(shapes):
        if i in transpose:
            base = rng.standard_normal(shape[:-2] + (shape[-1], shape[-2])).astype(np.float32)
            value = np.swapaxes(base, -1, -2)
        else:
            value = rng.standard_normal(shape).astype(np.float32)
        ours.append(fw.from_numpy(value).requires_grad_(True))
        theirs.append(torch.from_numpy(np.array(value)).requires_grad_(True))
    return ours, theirs


def _compare(ours, theirs, out_ours, out_theirs, rng):
    np.testing.assert_allclose(out_ours.detach().numpy(), out_theirs.detach().numpy(), rtol=1e-4,
                               atol=1e-4)
    cotangent = rng.standard_normal(tuple(out_ours.shape)).astype(np.float32)
    out_ours.backward(fw.tensor(cotangent))
    out_theirs.backward(torch.from_numpy(cotangent))
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shapes, transpose", [
    (((8, 16), (16, 4)), ()),
    (((8, 16), (16, 4)), (0, 1)),
    (((2, 4, 6, 8), (2, 4, 8, 6)), (1,)),
    (((3, 5, 8), (8, 2)), ()),
    (((8,), (8, 3)), ()),
], ids=str)
def test_matmul_gradients_match_torch(rng, shapes, transpose):
    ours, theirs = _pair(rng, *shapes, transpose=transpose)
    _compare(ours, theirs, fw.matmul(*ours), torch.matmul(*theirs), rng)
    assert fw_onednn.cache_info().misses >= 1


def test_bmm_gradients_match_torch(rng):
    ours, theirs = _pair(rng, (3, 5, 8), (3, 8, 4))
    _compare(ours, theirs, fw.bmm(*ours), torch.bmm(*theirs), rng)


@pytest.mark.parametrize("x_shape", [(6, 16), (2, 5, 16), (16,)], ids=str)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
def test_linear_gradients_match_torch(rng, x_shape, bias):
    shapes = [x_shape, (4, 16)] + ([(4,)] if bias else [])
    ours, theirs = _pair(rng, *shapes)
    _compare(ours, theirs, fw.linear(*ours), torch.nn.functional.linear(*theirs), rng)


def test_gradcheck_in_float64_runs_on_fw_cpu(rng):
    a = fw.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = fw.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    w = fw.tensor(rng.standard_normal((5, 4)), requires_grad=True)
    bias = fw.tensor(rng.standard_normal(5), requires_grad=True)
    assert fw.autograd.gradcheck(lambda x, y: fw.matmul(x, y), [a, b])
    assert fw.autograd.gradgradcheck(lambda x, y: fw.matmul(x, y), [a, b])
    assert fw.autograd.gradcheck(lambda x, y, z: fw.linear(x, y, z), [a, w, bias])
    assert fw_onednn.cache_info().misses == 0  # the guards refused float64 before asking


def _mlp_step(seed_weights, x, y):
    fw.manual_seed(0)
    model = fw.nn.Sequential(fw.nn.Linear(32, 64), fw.nn.ReLU(), fw.nn.Linear(64, 10))
    model.load_state_dict({k: fw.tensor(v) for k, v in seed_weights.items()})
    optimizer = fw.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        optimizer.zero_grad()
        loss = fw.nn.functional.cross_entropy(model(fw.tensor(x)), fw.tensor(y))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def test_an_mlp_trains_as_it_does_on_fw_cpu_alone(rng):
    fw.manual_seed(0)
    weights = {k: v.detach().numpy().copy() for k, v in fw.nn.Sequential(
        fw.nn.Linear(32, 64), fw.nn.ReLU(), fw.nn.Linear(64, 10)).state_dict().items()}
    x = rng.standard_normal((16, 32)).astype(np.float32)
    y = rng.integers(0, 10, 16)
    with_onednn = _mlp_step(weights, x, y)
    assert fw_onednn.cache_info().hits > 0
    others = [i.name for i in fw.plugins.info() if i.name not in ("fw_core", "fw_onednn")]
    try:
        fw.plugins.use(others)
        without = _mlp_step(weights, x, y)
    finally:
        fw.plugins.use(None)
    np.testing.assert_allclose(with_onednn[0], without[0], rtol=1e-5)
    for name, value in with_onednn[1].items():
        np.testing.assert_allclose(value, without[1][name], rtol=1e-4, atol=1e-5, err_msg=name)
