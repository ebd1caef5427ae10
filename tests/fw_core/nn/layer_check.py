"""``check_layer``: one call checks an fw layer against the same PyTorch layer.

It compares state-dict keys and shapes, copies the PyTorch weights into the fw layer, runs the
same inputs in each requested mode, and compares outputs, input gradients, every parameter
gradient (after backward of one random cotangent per output) and the buffers afterwards.
Inputs are NumPy arrays (float ones become leaves that require grad, unless wrapped in
``const``), other values (None, bools, ints, strings) pass unchanged, and tuples/lists/dicts are
converted element by element.
"""

from __future__ import annotations

import numpy as np
import torch

import fw_core as fw

TOLERANCE = {"float32": (1e-5, 1e-5), "float64": (1e-10, 1e-10)}
_FW_DTYPES = {"float32": fw.float32, "float64": fw.float64}
_TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64}


class const:  # noqa: N801 - reads as a marker in argument lists: const(mask)
    """Marks an array input that must not require grad (a mask, an additive bias)."""

    def __init__(self, array: np.ndarray):
        self.array = array


def _convert(value, framework: str, dtype: str, leaves: list, grad: bool, memo: dict):
    """NumPy arrays -> tensors of ``framework`` (recording float leaves in ``leaves``). The same
    array object given twice becomes the same tensor (self-attention's query is key is value)."""
    if id(value) in memo:
        return memo[id(value)]
    wants_grad = grad
    array = value
    if isinstance(value, const):
        array, wants_grad = value.array, False
    if isinstance(array, np.ndarray):
        array = array.astype(dtype) if array.dtype.kind == "f" else array
        if framework == "fw":
            t = fw.tensor(array)
        else:
            t = torch.from_numpy(np.array(array))
        if wants_grad and array.dtype.kind == "f":
            t.requires_grad_(True)
            leaves.append(t)
        memo[id(value)] = t
        return t
    if isinstance(value, (tuple, list)):
        return type(value)(_convert(v, framework, dtype, leaves, grad, memo) for v in value)
    if isinstance(value, dict):
        return {k: _convert(v, framework, dtype, leaves, grad, memo) for k, v in value.items()}
    return value


def _flatten(output) -> list:
    """Every tensor (or None) of a nested output, in order."""
    if isinstance(output, (tuple, list)):
        return [t for item in output for t in _flatten(item)]
    return [output]


def _host(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t.detach().__array__())


def _close(ours, theirs, what: str, tolerance) -> None:
    atol, rtol = tolerance
    ours, theirs = _host(ours), _host(theirs)
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} != torch's {theirs.shape}"
    np.testing.assert_allclose(ours.astype(np.float64), theirs.astype(np.float64), atol=atol,
                               rtol=rtol, err_msg=what, equal_nan=True)


def copy_weights(fw_layer, torch_layer) -> None:
    """Check the state dicts have the same keys (in order) and shapes, then load torch's."""
    theirs = torch_layer.state_dict()
    ours = fw_layer.state_dict()
    assert list(ours) == list(theirs), f"state dict keys differ:\n fw:    {list(ours)}\n" \
                                       f" torch: {list(theirs)}"
    for key in theirs:
        assert tuple(ours[key].shape) == tuple(theirs[key].shape), \
            f"{key}: fw shape {tuple(ours[key].shape)} != torch {tuple(theirs[key].shape)}"
    fw_layer.load_state_dict({k: v.detach().numpy() for k, v in theirs.items()})


def check_layer(fw_layer, torch_layer, args=(), kwargs=None, *, modes=("train", "eval"),
                dtype: str = "float32", grad: bool = True, load: bool = True,
                tolerance=None, seed: int = 0):
    """Run ``fw_layer(*args, **kwargs)`` and ``torch_layer(...)`` on the same inputs and
    weights and assert that everything observable agrees.

    Args:
        fw_layer, torch_layer: the same layer built in fw and in PyTorch.
        args, kwargs: inputs as NumPy arrays (and plain values), converted for each side.
        modes: "train" and/or "eval"; each runs forward (and backward when ``grad``).
        dtype: "float32" or "float64" for the layers' parameters and float inputs.
        grad: also compare input and parameter gradients.
        load: copy torch's weights into fw first (False continues from the current state,
            e.g. to accumulate batch-norm statistics over several calls).
        tolerance: (atol, rtol); defaults to 1e-5 in float32 and 1e-10 in float64.

    Returns:
        (fw outputs, torch outputs) of the last mode, flattened.
    """
    kwargs = kwargs or {}
    tolerance = tolerance or TOLERANCE[dtype]
    torch_layer.to(_TORCH_DTYPES[dtype])
    fw_layer.to(_FW_DTYPES[dtype])
    if load:
        copy_weights(fw_layer, torch_layer)
    rng = np.random.default_rng(seed)
    result = None
    for mode in modes:
        fw_layer.train(mode == "train")
        torch_layer.train(mode == "train")
        fw_layer.zero_grad()
        torch_layer.zero_grad()
        fw_leaves, torch_leaves = [], []
        fw_memo, torch_memo = {}, {}
        fw_args = _convert(list(args), "fw", dtype, fw_leaves, grad, fw_memo)
        fw_kwargs = _convert(dict(kwargs), "fw", dtype, fw_leaves, grad, fw_memo)
        torch_args = _convert(list(args), "torch", dtype, torch_leaves, grad, torch_memo)
        torch_kwargs = _convert(dict(kwargs), "torch", dtype, torch_leaves, grad, torch_memo)
        ours = _flatten(fw_layer(*fw_args, **fw_kwargs))
        theirs = _flatten(torch_layer(*torch_args, **torch_kwargs))
        assert len(ours) == len(theirs), f"{mode}: {len(ours)} outputs vs torch's {len(theirs)}"
        for i, (o, t) in enumerate(zip(ours, theirs)):
            assert (o is None) == (t is None), f"{mode}: output {i} is {o!r} vs torch {t!r}"
            if o is not None:
                _close(o, t, f"{mode}: output {i}", tolerance)
                assert o.dtype.name == str(t.dtype).removeprefix("torch."), \
                    f"{mode}: output {i} dtype {o.dtype} vs torch {t.dtype}"
        for (name, b), (tname, tb) in zip(fw_layer.named_buffers(),
                                         torch_layer.named_buffers()):
            assert name == tname
            _close(b, tb, f"{mode}: buffer {name} after forward", tolerance)
        if grad:
            _compare_grads(mode, fw_layer, torch_layer, ours, theirs, fw_leaves, torch_leaves,
                           rng, tolerance)
        result = (ours, theirs)
    return result


def _compare_grads(mode, fw_layer, torch_layer, ours, theirs, fw_leaves, torch_leaves, rng,
                   tolerance) -> None:
    pairs = [(o, t) for o, t in zip(ours, theirs)
             if o is not None and t.requires_grad and t.is_floating_point()]
    if not pairs:
        return
    cotangents = [rng.standard_normal(tuple(t.shape)) for _, t in pairs]
    fw.autograd.backward([o for o, _ in pairs],
                         [fw.tensor(c.astype(_host(o).dtype)) for (o, _), c in
                          zip(pairs, cotangents)])
    torch.autograd.backward([t for _, t in pairs],
                            [torch.from_numpy(c.astype(_host(t).dtype)) for (_, t), c in
                             zip(pairs, cotangents)])
    for i, (a, b) in enumerate(zip(fw_leaves, torch_leaves)):
        assert (a.grad is None) == (b.grad is None), f"{mode}: input {i} grad presence differs"
        if a.grad is not None:
            _close(a.grad, b.grad, f"{mode}: gradient of input {i}", tolerance)
    theirs_params = dict(torch_layer.named_parameters())
    for name, p in fw_layer.named_parameters():
        q = theirs_params[name]
        if q.grad is None:
            assert p.grad is None or not np.any(_host(p.grad)), \
                f"{mode}: {name} has a gradient but torch's has none"
            continue
        assert p.grad is not None, f"{mode}: {name} got no gradient (torch's did)"
        _close(p.grad, q.grad, f"{mode}: gradient of {name}", tolerance)
