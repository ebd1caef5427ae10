"""fw.bfloat16 against torch.bfloat16: rounding, promotion, each op family a LLaMA-style block
uses, autograd, modules, save/load, printing and the errors for what has no bfloat16 path.

Values are compared as bfloat16: ``exact`` where both libraries round one float32 result
(elementwise arithmetic, a float32 GEMM rounded once), within ``ulps`` bfloat16 steps where the
float32 results themselves may differ in their last bits (transcendentals, sums in another
order), and a whole block within bfloat16's tolerance.
"""

import ml_dtypes
import numpy as np
import pytest
import torch

import fw_core as fw
from fw_core import dtypes

BF16 = np.dtype(ml_dtypes.bfloat16)


def _pair(*shape, low=-3.0, high=3.0, seed=0):
    """The same bfloat16 values as an fw tensor and a torch tensor."""
    values = np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)
    bf = values.astype(BF16)
    return fw.tensor(bf), torch.from_numpy(bf.astype(np.float32)).bfloat16()


def _values(t) -> np.ndarray:
    """A tensor's values as float32 (exact for bfloat16), from fw or torch."""
    if isinstance(t, torch.Tensor):
        return t.detach().float().numpy()
    assert t.dtype is fw.bfloat16, f"expected a bfloat16 result, got {t.dtype}"
    return t.detach().numpy().astype(np.float32)


def _ulp(x: np.ndarray) -> np.ndarray:
    """The spacing of bfloat16 values at ``x`` (8 significant bits)."""
    tiny = float(ml_dtypes.finfo(BF16).smallest_normal)
    return np.exp2(np.floor(np.log2(np.maximum(np.abs(x), tiny))) - 7)


def assert_bf16(ours, theirs, ulps: float = 0, atol: float = 0.0):
    """fw's bfloat16 result equals torch's (``ulps`` = 0) or lies within ``ulps`` bfloat16
    steps of it (plus ``atol``, for values that cancel to near 0)."""
    a, b = _values(ours), _values(theirs)
    assert a.shape == b.shape
    if ulps == 0 and atol == 0:
        np.testing.assert_array_equal(a, b)
    else:
        tolerance = ulps * _ulp(b) + atol
        far = ~(np.abs(a - b) <= tolerance)
        assert not far.any(), f"{far.sum()} of {far.size} apart: {a[far][:5]} vs {b[far][:5]}"


# -- the dtype ------------------------------------------------------------------------------------
def test_bfloat16_is_a_floating_dtype_stored_as_ml_dtypes():
    x = fw.tensor([1.0, 2.5], dtype=fw.bfloat16)
    assert x.dtype is fw.bfloat16 and x.is_floating_point()
    assert x.numpy().dtype == BF16 and x.element_size() == 2
    assert dtypes.as_dtype("bfloat16") is fw.bfloat16
    assert fw.from_numpy(np.ones(2, BF16)).dtype is fw.bfloat16
    assert x.type() == "fw.BFloat16Tensor"


@pytest.mark.parametrize("other", dtypes.ALL, ids=lambda d: d.name)
def test_promotion_with_bfloat16_is_torchs(other):
    expected = torch.promote_types(torch.bfloat16, getattr(torch, other.name))
    assert fw.promote_types(fw.bfloat16, other).name == str(expected).removeprefix("torch.")
    assert fw.promote_types(other, fw.bfloat16) is fw.promote_types(fw.bfloat16, other)
    assert (fw.ones(2, dtype=fw.bfloat16) + fw.ones(2, dtype=other)).dtype.name == \
        str((torch.ones(2, dtype=torch.bfloat16) + torch.ones(2, dtype=getattr(
            torch, other.name))).dtype).removeprefix("torch.")


def test_the_two_half_floats_give_float32_and_scalars_keep_bfloat16():
    assert fw.promote_types(fw.float16, fw.bfloat16) is fw.float32
    x = fw.ones(3, dtype=fw.bfloat16)
    for scalar in (2, 2.5, True):
        assert (x * scalar).dtype is fw.bfloat16 and (scalar - x).dtype is fw.bfloat16
    assert (fw.tensor([1, 2]) * fw.ones(2, dtype=fw.bfloat16)).dtype is fw.bfloat16


def test_conversion_rounds_to_nearest_even_as_torch():
    # ties (exactly half a step) go to the even neighbour; NaN, inf, overflow, subnormals
    step = 2.0 ** -7
    values = np.array([1 + step / 2, 1 + 3 * step / 2, 1 + step / 2 + 2 ** -20, -(1 + step / 2),
                       3.14159265, 65504.0, 3.3961514e38, 3.4e38, np.inf, -np.inf, 1e-39,
                       -2.5e-40, 0.0, -0.0, 1e-45], np.float32)
    ours = fw.tensor(values).to(fw.bfloat16)
    theirs = torch.from_numpy(values).bfloat16()
    assert_bf16(ours, theirs)
    assert np.signbit(_values(ours)[13])  # -0.0 stays negative
    assert np.isnan(_values(fw.tensor([np.nan]).bfloat16())).all()
    back = ours.float()
    assert back.dtype is fw.float32
    np.testing.assert_array_equal(back.numpy(), theirs.float().numpy())


def test_fw_tensor_with_dtype_bfloat16_from_python_and_numpy():
    theirs = torch.tensor([[0.1, -7.77], [1e5, 2.0]], dtype=torch.bfloat16)
    assert_bf16(fw.tensor([[0.1, -7.77], [1e5, 2.0]], dtype=fw.bfloat16), theirs)
    assert_bf16(fw.tensor(np.array([[0.1, -7.77], [1e5, 2.0]]), dtype=fw.bfloat16), theirs)
    assert_bf16(fw.zeros(2, 2, dtype=fw.bfloat16) + 1, torch.ones(2, 2, dtype=torch.bfloat16))


def test_printing_shows_values_and_the_dtype():
    text = repr(fw.tensor([1.0, 2.5, 3.14159], dtype=fw.bfloat16))
    assert text == "tensor([1.    , 2.5   , 3.1406], dtype=fw.bfloat16)"


# -- elementwise ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "eq", "lt"])
def test_binary_arithmetic_is_exact(name):
    (a, ta), (b, tb) = _pair(64, seed=1), _pair(64, seed=2)
    ours, theirs = getattr(fw, name)(a, b), getattr(torch, name)(ta, tb)
    if theirs.dtype is torch.bool:
        assert ours.tolist() == theirs.tolist()
    else:
        assert_bf16(ours, theirs)


@pytest.mark.parametrize("scalar", [0.5, 3, 0.37, 1e-3])
def test_a_python_scalar_meets_bfloat16_as_a_bfloat16(scalar):
    # NumPy's rule (documented in docs/tensors.md): the scalar is rounded to bfloat16 first,
    # where torch keeps it in float32; the two agree exactly for scalars bfloat16 holds
    x, tx = _pair(64, seed=3)
    rounded = float(torch.tensor(scalar, dtype=torch.bfloat16))
    for ours, theirs in ((x * scalar, tx * rounded), (x + scalar, tx + rounded),
                         (x / scalar, tx / rounded), (x - scalar, tx - rounded)):
        assert_bf16(ours, theirs)
    # torch divides a scalar by a tensor as reciprocal-then-multiply, rounding twice
    assert_bf16(scalar / x, rounded / tx, ulps=1)
    if rounded == scalar:
        assert_bf16(x * scalar, tx * scalar)


@pytest.mark.parametrize("name, ulps", [
    ("neg", 0), ("abs", 0), ("square", 0), ("exp", 1), ("tanh", 1), ("sigmoid", 1),
    ("silu", 1), ("rsqrt", 1), ("sqrt", 1), ("log", 1), ("sin", 1), ("gelu", 1), ("relu", 0)])
def test_unary_ops_round_a_float32_result(name, ulps):
    positive = name in ("rsqrt", "sqrt", "log")
    x, tx = _pair(257, low=0.05 if positive else -4.0, high=4.0, seed=3)
    fn = getattr(fw, name, None) or getattr(fw.nn.functional, name)
    tfn = getattr(torch, name, None) or getattr(torch.nn.functional, name)
    assert_bf16(fn(x), tfn(tx), ulps=ulps)


def test_nan_to_num_uses_bfloat16s_own_bounds():
    values = [np.nan, np.inf, -np.inf, 1.5]
    ours = fw.tensor(values, dtype=fw.bfloat16)
    theirs = torch.tensor(values, dtype=torch.bfloat16)
    assert_bf16(ours.nan_to_num(), theirs.nan_to_num())
    assert_bf16(ours.nan_to_num(nan=2.0, neginf=-7.0), theirs.nan_to_num(nan=2.0, neginf=-7.0))


def test_pow_and_where():
    (x, tx), (y, ty) = _pair(40, low=0.1, high=3.0, seed=4), _pair(40, low=-2.0, high=2.0)
    assert_bf16(fw.pow(x, y), torch.pow(tx, ty), ulps=1)
    assert_bf16(x ** 2, tx ** 2)
    assert_bf16(fw.where(y > 0, x, y), torch.where(ty > 0, tx, ty))
    assert_bf16(fw.where(y > 0, x, 0.0), torch.where(ty > 0, tx, 0.0))


# -- reductions and normalisations ----------------------------------------------------------------
def test_sum_and_mean_accumulate_in_float32_as_torch():
    x, tx = _pair(8, 4096, low=0.0, high=1.0, seed=5)
    assert_bf16(x.sum(), tx.sum(), ulps=1)
    assert_bf16(x.sum(dim=1), tx.sum(dim=1), ulps=1)
    assert_bf16(x.mean(dim=-1, keepdim=True), tx.mean(dim=-1, keepdim=True), ulps=1)
    # an accumulator of bfloat16 would have stopped near 256 (the step there is 2 > any term)
    assert float(x[0].sum().float().item()) == pytest.approx(2048, rel=0.05)


def test_max_argmax_var_and_cumsum():
    x, tx = _pair(6, 50, seed=6)
    assert_bf16(x.amax(dim=1), tx.amax(dim=1))
    assert x.argmax(dim=1).tolist() == tx.argmax(dim=1).tolist()
    assert_bf16(x.var(dim=1), tx.var(dim=1), ulps=1)
    assert_bf16(fw.cumsum(x, dim=1), torch.cumsum(tx, dim=1), ulps=2, atol=2 ** -6)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_family(name):
    x, tx = _pair(5, 33, low=-8.0, high=8.0, seed=7)
    assert_bf16(getattr(fw, name)(x, dim=-1), getattr(torch, name)(tx, dim=-1), ulps=1)


def test_rms_norm_and_layer_norm():
    x, tx = _pair(4, 7, 64, seed=8)
    w, tw = _pair(64, low=0.5, high=1.5, seed=9)
    b, tb = _pair(64, seed=10)
    F, TF = fw.nn.functional, torch.nn.functional
    assert_bf16(F.rms_norm(x, (64,), w, eps=1e-6), TF.rms_norm(tx, (64,), tw, eps=1e-6), ulps=1)
    assert_bf16(F.layer_norm(x, (64,), w, b, eps=1e-5), TF.layer_norm(tx, (64,), tw, tb, eps=1e-5),
                ulps=1, atol=2 ** -8)


# -- products -------------------------------------------------------------------------------------
def test_matmul_and_linear_round_a_float32_gemm_once():
    (a, ta), (b, tb) = _pair(48, 96, seed=11), _pair(96, 40, seed=12)
    (w, tw), (bias, tbias) = _pair(40, 96, seed=13), _pair(40, seed=14)
    exact = (a.float() @ b.float()).bfloat16()  # what "upcast, GEMM, round once" gives
    assert_bf16(a @ b, exact, ulps=1)
    assert_bf16(a @ b, ta @ tb, ulps=1)
    assert_bf16(fw.nn.functional.linear(a, w, bias), torch.nn.functional.linear(ta, tw, tbias),
                ulps=1, atol=2 ** -6)
    batched, tbatched = _pair(3, 48, 96, seed=15)
    assert_bf16(fw.matmul(batched, b), torch.matmul(tbatched, tb), ulps=1)


def test_the_fw_cpu_kernel_is_a_float32_gemm_rounded_once():
    from fw_cpu.kernels import linalg

    kernels = linalg.kernels(np, None)
    (a, _), (b, _) = _pair(70, 130, seed=16), _pair(130, 50, seed=17)
    a, b = a.numpy(), b.numpy()
    out = kernels["matmul"](a, b)
    assert out.dtype == BF16
    np.testing.assert_array_equal(out, (a.astype(np.float32) @ b.astype(np.float32)).astype(BF16))
    w = np.ascontiguousarray(b.T)
    out = kernels["linear"](a, w, w[:, 0].copy())
    np.testing.assert_array_equal(
        out, (a.astype(np.float32) @ b.astype(np.float32) + w[:, 0].astype(np.float32))
        .astype(BF16))


def test_large_products_on_onednn_agree_with_torch():
    fw_onednn = pytest.importorskip("fw_onednn")
    from fw_onednn import cache, kernels

    (a, ta), (b, tb) = _pair(256, 512, seed=18), _pair(512, 256, seed=19)
    served = kernels.takes_matmul(a.numpy(), b.numpy())
    if served is None:
        pytest.skip(f"oneDNN has no bf16 matmul on this CPU ({fw_onednn.cpu_isa()})")
    assert cache.PRIMITIVES.latest().serves  # a bf16 brgemm ("brg:avx512_core_bf16", AMX)
    assert_bf16(fw.tensor(served(a.numpy(), b.numpy())), ta @ tb, ulps=1)
    assert_bf16(a @ b, ta @ tb, ulps=1)
    (w, tw), (bias, tbias) = _pair(128, 512, seed=20), _pair(128, seed=21)
    assert kernels.takes_linear(a.numpy(), w.numpy(), bias.numpy()) is not None
    assert_bf16(fw.nn.functional.linear(a, w, bias), torch.nn.functional.linear(ta, tw, tbias),
                ulps=1, atol=2 ** -5)
    assert_bf16(a @ b.t().contiguous().t(), ta @ tb, ulps=1)  # a transposed view


# -- shape, indexing, embedding -------------------------------------------------------------------
def test_shape_and_indexing_ops_move_values_unchanged():
    x, tx = _pair(4, 6, 8, seed=22)
    assert_bf16(x.reshape(24, 8), tx.reshape(24, 8))
    assert_bf16(x.transpose(0, 2), tx.transpose(0, 2))
    assert_bf16(x[1:, ::2, 3], tx[1:, ::2, 3])
    assert_bf16(fw.cat([x, x * 2], dim=1), torch.cat([tx, tx * 2], dim=1))
    assert_bf16(fw.stack([x, x], dim=0), torch.stack([tx, tx], dim=0))
    index = [3, 0, 3]
    assert_bf16(x[:, fw.tensor(index)], tx[:, torch.tensor(index)])
    assert_bf16(fw.triu(x[0]), torch.triu(tx[0]))


def test_embedding():
    weight, tweight = _pair(10, 16, seed=23)
    ids = [[1, 4, 9], [0, 0, 2]]
    assert_bf16(fw.nn.functional.embedding(fw.tensor(ids), weight),
                torch.nn.functional.embedding(torch.tensor(ids), tweight))


# -- autograd -------------------------------------------------------------------------------------
def test_gradients_of_bfloat16_leaves_are_bfloat16_and_match_torch():
    (x, tx), (w, tw) = _pair(8, 32, seed=24), _pair(16, 32, seed=25)
    x.requires_grad_(True), w.requires_grad_(True)
    tx.requires_grad_(True), tw.requires_grad_(True)
    target, ttarget = _pair(8, 16, seed=26)
    F, TF = fw.nn.functional, torch.nn.functional
    loss = ((F.silu(F.linear(x, w)) - target) ** 2).mean()
    tloss = ((TF.silu(TF.linear(tx, tw)) - ttarget) ** 2).mean()
    loss.backward()
    tloss.backward()
    assert loss.dtype is fw.bfloat16
    assert x.grad.dtype is fw.bfloat16 and w.grad.dtype is fw.bfloat16
    assert_bf16(loss, tloss, ulps=2)
    for ours, theirs in ((x.grad, tx.grad), (w.grad, tw.grad)):
        scale = np.abs(_values(theirs)).max()
        assert_bf16(ours, theirs, ulps=4, atol=0.02 * scale)


# -- blocks ---------------------------------------------------------------------------------------
def block_weights(dim, hidden, seed):
    """Random float32 weights of a :func:`llama_block` (also used by
    plugins/fw_onednn/benchmarks/bfloat16.py)."""
    rng = np.random.default_rng(seed)
    names = {"wq": (dim, dim), "wk": (dim, dim), "wv": (dim, dim), "wo": (dim, dim),
             "w1": (hidden, dim), "w3": (hidden, dim), "w2": (dim, hidden)}
    weights = {k: (rng.standard_normal(s) / np.sqrt(s[1])).astype(np.float32)
               for k, s in names.items()}
    weights["norm"] = rng.uniform(0.8, 1.2, dim).astype(np.float32)
    return weights


def llama_block(lib, x, p, heads):
    """A LLaMA-style block (RMSNorm, causal attention, SwiGLU MLP, residuals) written once for
    fw and torch, which share these names."""
    F = lib.nn.functional
    batch, length, dim = x.shape
    h = F.rms_norm(x, (dim,), p["norm"], eps=1e-6)

    def split(t):
        return t.reshape(batch, length, heads, dim // heads).transpose(1, 2)

    q, k, v = (split(F.linear(h, p[w])) for w in ("wq", "wk", "wv"))
    scores = (q @ k.transpose(-2, -1)) * (dim // heads) ** -0.5
    mask = lib.triu(lib.ones(length, length, dtype=lib.bool), diagonal=1)
    scores = lib.where(mask, float("-inf"), scores)
    attended = (lib.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(batch, length, dim)
    x = x + F.linear(attended, p["wo"])
    h = F.rms_norm(x, (dim,), p["norm"], eps=1e-6)
    return x + F.linear(F.silu(F.linear(h, p["w1"])) * F.linear(h, p["w3"]), p["w2"])


def test_a_llama_block_in_bfloat16_agrees_with_torch_bfloat16():
    weights = block_weights(64, 172, seed=27)
    x = np.random.default_rng(28).standard_normal((2, 12, 64)).astype(np.float32)
    ours = llama_block(fw, fw.tensor(x).bfloat16(),
                       {k: fw.tensor(v).bfloat16() for k, v in weights.items()}, heads=4)
    theirs = llama_block(torch, torch.from_numpy(x).bfloat16(),
                         {k: torch.from_numpy(v).bfloat16() for k, v in weights.items()}, heads=4)
    exact = llama_block(torch, torch.from_numpy(x).double(),
                        {k: torch.from_numpy(v).double() for k, v in weights.items()}, heads=4)
    a, b, e = _values(ours), _values(theirs), exact.numpy()
    scale = np.abs(e).max()
    # fw and torch are as close to each other as bfloat16 lets either be to the exact result
    assert np.abs(a - b).max() <= 0.03 * scale
    assert np.abs(a - e).max() <= 2 * max(np.abs(b - e).max(), 2 ** -8 * scale)


def test_an_mlp_and_sdpa_in_bfloat16_agree_with_torch():
    (x, tx), (w1, tw1), (w2, tw2) = _pair(16, 32, seed=29), _pair(64, 32, seed=30), \
        _pair(32, 64, seed=31)
    F, TF = fw.nn.functional, torch.nn.functional
    out = F.linear(F.gelu(F.linear(x, w1 * 0.25)), w2 * 0.25)
    tout = TF.linear(TF.gelu(TF.linear(tx, tw1 * 0.25)), tw2 * 0.25)
    assert_bf16(out, tout, ulps=2, atol=2 ** -6)
    (q, tq), (k, tk), (v, tv) = (_pair(2, 4, 9, 16, seed=s) for s in (32, 33, 34))
    assert_bf16(F.scaled_dot_product_attention(q, k, v, is_causal=True),
                TF.scaled_dot_product_attention(tq, tk, tv, is_causal=True), ulps=2,
                atol=2 ** -7)


# -- modules, save and load -----------------------------------------------------------------------
def test_module_to_bfloat16_converts_parameters_and_floating_buffers():
    model = fw.nn.Sequential(fw.nn.Linear(4, 3), fw.nn.BatchNorm1d(3), fw.nn.Embedding(5, 3))
    reference = {k: v.numpy().astype(np.float32) for k, v in model.state_dict().items()}
    model.to(fw.bfloat16)
    state = model.state_dict()
    assert state["1.num_batches_tracked"].dtype is fw.int64
    for key, value in state.items():
        if key != "1.num_batches_tracked":
            assert value.dtype is fw.bfloat16, key
            np.testing.assert_array_equal(value.numpy(), reference[key].astype(BF16))
    assert all(p.dtype is fw.bfloat16 and p.requires_grad for p in model.parameters())
    out = model[1](model[0](fw.ones(2, 4, dtype=fw.bfloat16)))
    assert out.dtype is fw.bfloat16
    assert model.float().state_dict()["0.weight"].dtype is fw.float32


@pytest.mark.parametrize("suffix", [".safetensors", ".fw"])
def test_save_and_load_keep_bfloat16_bit_for_bit(tmp_path, suffix):
    x, _ = _pair(3, 5, seed=35)
    state = {"weight": x, "ids": fw.tensor([1, 2])}
    path = tmp_path / f"state{suffix}"
    fw.save(state, path)
    loaded = fw.load(path)
    assert loaded["weight"].dtype is fw.bfloat16
    np.testing.assert_array_equal(loaded["weight"].numpy().view(np.uint16),
                                  x.numpy().view(np.uint16))


def test_safetensors_files_declare_bf16_for_other_readers(tmp_path):
    from safetensors.torch import load_file

    x, tx = _pair(4, 4, seed=36)
    fw.save({"x": x}, tmp_path / "x.safetensors")
    (value,) = load_file(tmp_path / "x.safetensors").values()
    assert value.dtype is torch.bfloat16
    assert torch.equal(value, tx)


# -- errors ---------------------------------------------------------------------------------------
def test_recurrent_layers_refuse_bfloat16_with_a_fix():
    rnn = fw.nn.LSTM(3, 4).to(fw.bfloat16)
    with pytest.raises(fw.errors.DTypeError, match="lstm_layer.*no bfloat16 path") as info:
        rnn(fw.ones(2, 1, 3, dtype=fw.bfloat16))
    assert "float32" in str(info.value)


def test_a_kernel_that_fails_on_bfloat16_names_the_op_and_the_fix(monkeypatch):
    from fw_core.device import registry

    def no_bfloat16_loop(x):
        raise TypeError("ufunc 'exp' not supported for the input types")

    monkeypatch.setitem(registry.kernels["cpu"], fw.OPS["exp"], no_bfloat16_loop)
    with pytest.raises(fw.errors.DTypeError, match="exp.*no bfloat16 path") as info:
        fw.exp(fw.ones(2, dtype=fw.bfloat16))
    assert ".float()" in str(info.value)
    with pytest.raises(fw.errors.KernelError, match="kernel failed"):  # other dtypes: a bug
        fw.exp(fw.ones(2))


# -- every op's conformance cases -----------------------------------------------------------------
#: ops whose conformance cases do not carry over to bfloat16, and why
_NOT_IN_BFLOAT16 = {
    "view_dtype": "it reinterprets bytes: 2-byte elements give other shapes than float32's",
    "lstm_layer": "the recurrent layers refuse bfloat16 (test_recurrent_layers_refuse_...)",
    "gru_layer": "as lstm_layer", "rnn_layer": "as lstm_layer",
}
#: cases whose bfloat16 values rightly differ from the float32 run's
_OWN_VALUES = {"nan_to_num-float32_bounds": "inf becomes bfloat16's largest value, not float32's "
                                            "(test_nan_to_num_uses_bfloat16s_own_bounds)"}


def test_every_conformance_case_runs_in_bfloat16_as_its_meta_rule_says():
    """Each case with float32 inputs, rerun on them rounded to bfloat16: the result has the
    dtype the op's meta rule promises and is within bfloat16's resolution of the float32 run
    on the same values."""
    from fw_core.ops.meta import spec_of
    from fw_core.records import Inspector
    from fw_core.testing import conformance as cf
    from fw_core.testing.cases import ALL

    checked, failures = 0, []
    for case in ALL:
        drawn = cf.draw(case, "float32")
        if case.op.removesuffix("_backward") in _NOT_IN_BFLOAT16 or not any(
                isinstance(v, np.ndarray) and v.dtype == np.float32 for v in drawn):
            continue
        narrow = [v.astype(BF16) if isinstance(v, np.ndarray) and v.dtype == np.float32 else v
                  for v in drawn]
        wide = [v.astype(np.float32) if isinstance(v, np.ndarray) and v.dtype == BF16 else v
                for v in narrow]
        inputs = cf.to_fw(fw, narrow, case.inputs, "cpu")
        events = []
        try:
            with fw.inspectors.activated(Inspector(name="bf16", on_op=events.append)):
                out = case.fn(fw, *inputs)
        except fw.errors.FwError as error:
            failures.append(f"{case.id}: {type(error).__name__}: {error}")
            continue
        checked += 1
        ours = [e for e in events if e.op.name == case.op]
        if ours:
            event = ours[-1]
            spec = event.op.meta(*(spec_of(t) for t in event.inputs), **event.attrs)
            if spec.dtype is not event.output.dtype:
                failures.append(f"{case.id}: kernel gave {event.output.dtype}, meta {spec.dtype}")
        if case.id in _OWN_VALUES:
            continue
        reference = case.fn(fw, *cf.to_fw(fw, wide, case.inputs, "cpu"))
        got = np.asarray(out.float().numpy() if out.dtype is fw.bfloat16 else out.numpy(),
                         np.float64)
        want = np.asarray(reference.numpy(), np.float64)
        if reference.dtype is fw.float32:  # what bfloat16 can hold of it (overflow to inf)
            want = want.astype(BF16).astype(np.float64)
        finite = np.abs(want[np.isfinite(want)])
        scale = max(1.0, float(finite.max(initial=0.0)))
        if got.shape != want.shape or not np.allclose(got, want, rtol=2e-2, atol=2e-2 * scale,
                                                      equal_nan=True):
            failures.append(f"{case.id}: values differ from the float32 run")
    assert not failures, "\n".join(failures)
    assert checked > 900
