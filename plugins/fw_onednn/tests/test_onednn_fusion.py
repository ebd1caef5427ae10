"""fw_onednn's fusion rule (``onednn.post_ops``): a product and its epilogue as one oneDNN
primitive with post-ops. Each epilogue pattern compiled equals eager; what the rule declines
goes to fw_cpu's epilogue; compiled training of an MLP and a transformer block equals eager for
20 steps; the scheduler measures fused against unfused and logs the decision."""

import copy

import numpy as np
import pytest

import fw_core as fw
import fw_onednn
from fw_core import hookimpl
from fw_core.ops import anchors, scalar
from fw_core.ops.registry import define_op
from fw_core.records import KernelSpec, Structure, TensorSpec
from fw_onednn import fusion

RULE = fusion.NAME


@pytest.fixture
def scheduler():
    """Compile on the first call; ``fusion`` set by the test (default: always fuse, so the
    rule's kernels run whatever their speed on these small shapes)."""
    fw.scheduler.reset()
    fw.scheduler.configure(compile_after=0, fusion="always")
    yield fw.scheduler
    fw.scheduler.reset()


def _tensor(rng, *shape, scale=1.0):
    return fw.from_numpy((rng.standard_normal(shape) * scale).astype(np.float32))


def _groups(compiled) -> dict[str, str]:
    """{ops of a fused group: the rule that made it} over every plan of ``compiled``."""
    return {"+".join(n.op.name for n in step.nodes): step.rule.name
            for plan in compiled.plans() for step in plan.graph.steps
            if step.__class__.__name__ == "Group"}


def _compiled_equals_eager(fn, *args):
    compiled = fw.compile(fn)
    with fw.no_grad():
        want = fn(*args).numpy()
        for _ in range(2):
            got = compiled(*args).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6, equal_nan=True)
            assert np.array_equal(np.isnan(got), np.isnan(want))
    assert compiled.counts["plan_calls"] >= 1
    return _groups(compiled)


def test_the_rule_is_tried_before_fw_cpus_epilogue():
    rules = {r.name: r for r in fw.plugins.fusion_rules("cpu")}
    assert rules[RULE].priority > rules["cpu.blas_epilogue"].priority
    # the rule's functions are fusion.py's, imported at the first compile
    assert rules[RULE].device == "cpu"
    assert repr(rules[RULE].supports).startswith("<fw_onednn.fusion.supports,")
    assert repr(rules[RULE].generate).startswith("<fw_onednn.fusion.generate,")


#: name -> (fn(rng) -> (function, arguments), the group's ops)
PATTERNS = {
    "linear bias gelu": (lambda r: (lambda x, w, b: fw.gelu(fw.linear(x, w, b)),
                                    (_tensor(r, 16, 32), _tensor(r, 48, 32), _tensor(r, 48))),
                         "linear+gelu"),
    "linear gelu tanh 3-d": (lambda r: (lambda x, w, b: fw.gelu(fw.linear(x, w, b), "tanh"),
                                        (_tensor(r, 4, 8, 32), _tensor(r, 48, 32),
                                         _tensor(r, 48))), "linear+gelu"),
    "linear bias add silu": (lambda r: (lambda x, w, b: fw.silu(fw.linear(x, w) + b),
                                        (_tensor(r, 16, 32), _tensor(r, 48, 32), _tensor(r, 48))),
                             "linear+add+silu"),
    "residual after linear": (lambda r: (lambda h, w, b, x: x + fw.linear(h, w, b),
                                         (_tensor(r, 4, 8, 64), _tensor(r, 32, 64),
                                          _tensor(r, 32), _tensor(r, 4, 8, 32))), "linear+add"),
    "relu then scale": (lambda r: (lambda x, w: fw.relu(fw.linear(x, w)) * 0.5,
                                   (_tensor(r, 16, 32), _tensor(r, 48, 32))), "linear+relu+mul"),
    "matmul divided by a number": (lambda r: (lambda a, b: fw.matmul(a, b) / 3.0,
                                              (_tensor(r, 2, 4, 16, 8), _tensor(r, 2, 4, 8, 16))),
                                   "matmul+div"),
    "number minus matmul": (lambda r: (lambda a, b: 1.0 - fw.tanh(fw.matmul(a, b)),
                                       (_tensor(r, 16, 8), _tensor(r, 8, 24))),
                            "matmul+tanh+sub"),
    "tensor minus matmul": (lambda r: (lambda a, b, t: t - fw.matmul(a, b) * 2.0,
                                       (_tensor(r, 16, 8), _tensor(r, 8, 24), _tensor(r, 24))),
                            "matmul+mul+sub"),
    "bmm times a broadcast tensor": (lambda r: (lambda a, b, t: fw.bmm(a, b) * t,
                                                (_tensor(r, 3, 16, 8), _tensor(r, 3, 8, 24),
                                                 _tensor(r, 3, 1, 24))), "bmm+mul"),
    "matmul of a transposed operand, sigmoid": (
        lambda r: (lambda a, b: fw.sigmoid(fw.matmul(a, b.transpose(0, 1))),
                   (_tensor(r, 16, 8), _tensor(r, 24, 8))), "matmul+sigmoid"),
}


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_each_epilogue_compiled_as_post_ops_equals_eager(rng, scheduler, name):
    make, ops = PATTERNS[name]
    fn, args = make(rng)
    groups = _compiled_equals_eager(fn, *args)
    assert groups == {ops: RULE}, groups
    info = fw_onednn.cache_info()
    assert info.by_kind.get(f"{ops}:f32") == 1 and info.refusals == 0, info


def test_a_nan_stays_nan_through_a_relu_post_op(rng, scheduler):
    x = _tensor(rng, 16, 32)
    x.numpy()[3, 4] = np.nan
    groups = _compiled_equals_eager(lambda x, w: fw.relu(fw.linear(x, w)), x, _tensor(rng, 48, 32))
    assert groups == {"linear+relu": RULE}


@pytest.mark.parametrize("big", ["inf", "2**127"])
def test_an_inf_through_the_erf_gelu_is_computed_unfused_as_fw_does(rng, scheduler, big):
    # oneDNN's erf gelu gives NaN for +inf and overflows to +inf from 2**127, where fw's is x
    x, w = _tensor(rng, 16, 32), _tensor(rng, 48, 32)
    if big == "inf":
        x.numpy()[2, :] = 1e30  # the product's row overflows to +-inf
    else:
        x.numpy()[2, :], w.numpy()[:, 0] = 0.0, 1.0
        x.numpy()[2, 0] = 2.5e38  # the product's row: 2.5e38, finite
    groups = _compiled_equals_eager(lambda x, w: fw.gelu(fw.linear(x, w)), x, w)
    assert groups == {"linear+gelu": RULE}


@pytest.mark.parametrize("operand", ["transposed", "one matrix for every batch"])
def test_an_operand_onednn_cannot_read_runs_unfused_with_the_same_result(rng, scheduler,
                                                                         operand):
    """oneDNN's matmul post-ops read a (1, M, N) operand over (B, M, N) only with its
    reference code; a transposed one not at all."""
    if operand == "transposed":
        args = (_tensor(rng, 16, 8), _tensor(rng, 8, 24), _tensor(rng, 24, 16).transpose(0, 1))
    else:
        args = (_tensor(rng, 3, 16, 8), _tensor(rng, 3, 8, 24), _tensor(rng, 1, 16, 24))
    groups = _compiled_equals_eager(lambda a, b, t: fw.matmul(a, b) + t, *args)
    assert groups == {"matmul+add": RULE}
    assert fw_onednn.cache_info().refusals == 1


@pytest.mark.parametrize("name, fn, ops", [
    ("the product divides", lambda a, b: 2.0 / fw.matmul(a, b), "matmul+div"),
    ("the product is read twice", lambda a, b: (lambda p: p * fw.sigmoid(p))(fw.matmul(a, b)),
     "matmul+sigmoid+mul"),
    ("clamp drops NaN in oneDNN", lambda a, b: fw.clamp(fw.matmul(a, b), -1.0, 1.0),
     "matmul+clamp"),
])
def test_epilogues_that_are_no_post_op_chain_go_to_fw_cpus_epilogue(rng, scheduler, name, fn,
                                                                      ops):
    groups = _compiled_equals_eager(fn, _tensor(rng, 16, 8), _tensor(rng, 8, 24))
    assert groups == {ops: "cpu.blas_epilogue"}, name


def test_a_product_the_backward_pass_keeps_goes_to_fw_cpus_epilogue(rng, scheduler):
    layer = fw.nn.Linear(32, 48)

    def step(x):
        out = fw.gelu(layer(x)).sum()  # gelu's gradient reads the product
        out.backward()
        return out

    compiled = fw.compile(step)
    for _ in range(2):
        compiled(_tensor(rng, 16, 32))
    assert _groups(compiled)["linear+gelu"] == "cpu.blas_epilogue"


# -- training: compiled equals eager ---------------------------------------------------------------
class Block(fw.nn.Module):
    """A pre-LN transformer encoder block (GELU, causal mask) with a token head."""

    def __init__(self, vocab=40, d=32, heads=4, ffn=64, seq=16):
        super().__init__()
        self.tok = fw.nn.Embedding(vocab, d)
        self.layer = fw.nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.0, activation="gelu",
                                                   batch_first=True, norm_first=True)
        self.out = fw.nn.Linear(d, vocab)
        self.mask = fw.triu(fw.full((seq, seq), float("-inf")), diagonal=1)

    def forward(self, tokens):
        return self.out(self.layer(self.tok(tokens), src_mask=self.mask))


def _mlp():
    return fw.nn.Sequential(fw.nn.Linear(32, 64), fw.nn.GELU(), fw.nn.Linear(64, 64),
                            fw.nn.ReLU(), fw.nn.Linear(64, 10))


def _step(model, loss_fn):
    opt = fw.optim.Adam(model.parameters(), lr=1e-3)

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def _close(a, b, what):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=2e-5, err_msg=what)


@pytest.mark.parametrize("kind", ["mlp", "transformer block"])
def test_twenty_compiled_training_steps_equal_eager(scheduler, kind):
    fw.manual_seed(0)
    rng = np.random.default_rng(7)
    if kind == "mlp":
        model, loss_fn = _mlp(), fw.cross_entropy
        def make_x(): return fw.from_numpy(rng.standard_normal((32, 32)).astype(np.float32))
        def make_y(): return fw.from_numpy(rng.integers(0, 10, 32))
    else:
        model = Block()
        def loss_fn(logits, y): return fw.cross_entropy(logits.reshape(-1, 40), y)
        def make_x(): return fw.from_numpy(rng.integers(0, 40, (4, 16)))
        def make_y(): return fw.from_numpy(rng.integers(0, 40, 64))
    twin = copy.deepcopy(model)
    eager, compiled = _step(model, loss_fn), fw.compile(_step(twin, loss_fn))
    # a gradient that is only rounding noise (the attention's key bias: mathematically zero)
    # becomes +-lr Adam steps whose sign reassociation flips: those elements are left out of
    # the weights' comparison, as in tests/fw_core/compile/test_compile.py
    noise = {name: np.zeros(p.shape, bool) for name, p in twin.named_parameters()}
    for i in range(20):
        x, y = make_x(), make_y()
        _close(compiled(x, y).item(), eager(x, y).item(), f"loss at step {i}")
        for (name, p), q in zip(twin.named_parameters(), model.parameters()):
            _close(p.grad.numpy(), q.grad.numpy(), f"grad of {name} at step {i}")
            g = np.abs(q.grad.numpy())
            noise[name] |= (g > 0) & (g <= 1e-6 * g.max())
            keep = ~noise[name]
            _close(p.detach().numpy()[keep], q.detach().numpy()[keep], f"{name} after step {i}")
    assert sum(n.sum() for n in noise.values()) <= 0.02 * sum(n.size for n in noise.values())
    assert compiled.counts["plan_calls"] == 19 and compiled.counts["fallbacks"] == 0
    if kind == "transformer block":  # the residual adds and the attention's scaled product
        assert {"linear+add", "matmul+mul"} <= {ops for ops, rule in _groups(compiled).items()
                                                if rule == RULE}, _groups(compiled)


def test_the_scheduler_measures_fused_against_unfused_and_logs_it(rng, scheduler):
    scheduler.configure(fusion="measure")
    model = fw.nn.Sequential(fw.nn.Linear(256, 512), fw.nn.GELU())
    infer = fw.compile(model)
    x = _tensor(rng, 128, 256)
    with fw.no_grad():
        for _ in range(2):
            infer(x)
    [decision] = [e for e in fw.scheduler.log() if e["kind"] == "fuse"]
    assert decision["subject"].startswith("fuse[linear+gelu]")
    assert decision["reason"].startswith("measured: fused ")
    assert decision["stats"]["fused_s"] > 0 and decision["stats"]["unfused_s"] > 0
    chosen = decision["choice"]
    assert _groups(infer) == ({"linear+gelu": RULE} if chosen else {})
    assert ("linear+gelu" in infer.explain()) and \
        (("not chosen" in infer.explain()) != chosen)


def _logistic(x):
    return (1 / (1 + np.exp(-x))).astype(x.dtype)


class Logistic:
    """An in-process plugin op that computes sigmoid under another name, with sigmoid's formula."""

    op = define_op("logistic_test", family="custom", doc="1 / (1 + e^-x).",
                   signature="logistic_test(x: Tensor) -> Tensor",
                   meta=lambda x: TensorSpec(tuple(x.shape), x.dtype), vjp=None,
                   structure=Structure.ELEMENTWISE, anchor=anchors.smooth(),
                   expr=lambda x: 1.0 / (1.0 + scalar.exp(-x)))

    @hookimpl
    def fw_register_ops(self):
        return [self.op]

    @hookimpl
    def fw_register_kernels(self):
        return [KernelSpec(op="logistic_test", device="cpu", fn=_logistic)]


def test_a_post_op_is_found_by_its_formula_not_its_name(rng, scheduler):
    fw.plugins.register(Logistic(), "fw_logistic_test")
    try:
        def fn(x, w):
            return fw.ops.apply(Logistic.op, (fw.linear(x, w),))

        groups = _compiled_equals_eager(fn, _tensor(rng, 16, 32), _tensor(rng, 48, 32))
        assert groups == {"linear+logistic_test": RULE}, groups
    finally:
        fw.plugins.unregister("fw_logistic_test")


@pytest.mark.parametrize("name, attrs, alg", [
    ("relu", {}, "ELTWISE_ELU"), ("leaky_relu", {"negative_slope": 0.1}, "ELTWISE_RELU"),
    ("leaky_relu", {"negative_slope": 0.0}, "ELTWISE_ELU"), ("elu", {"alpha": 1.0}, "ELTWISE_ELU"),
    ("gelu", {"approximate": "none"}, "ELTWISE_GELU_ERF"),
    ("gelu", {"approximate": "tanh"}, "ELTWISE_GELU_TANH"), ("sigmoid", {}, "ELTWISE_LOGISTIC"),
    ("silu", {}, "ELTWISE_SWISH"), ("mish", {}, "ELTWISE_MISH"), ("sqrt", {}, "ELTWISE_SQRT"),
    ("tanh", {}, "ELTWISE_TANH")])
def test_each_activation_formula_is_its_onednn_algorithm(name, attrs, alg):
    from types import SimpleNamespace

    from fw_onednn import capi_eltwise, postops

    node = SimpleNamespace(op=fw.ops.get(name), attrs=attrs, inputs=(None,))
    assert postops._activation(node).alg == getattr(capi_eltwise, alg)
    assert postops._activation(SimpleNamespace(op=fw.ops.get("exp"), attrs={},
                                               inputs=(None,))) is None
