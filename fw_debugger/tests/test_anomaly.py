"""detect_anomaly: the op that produced a NaN/Inf, its module and line, forward and backward."""

import warnings

import numpy as np
import pytest

import fw_core as fw
import fw_debugger
from fw_core import nn
from fw_core.errors import FwError
from fw_debugger import AnomalyError, detect_anomaly, health_stats

HERE = __file__


def line_of(text: str) -> str:
    """``file:line`` of the line in this file containing ``text`` (the line a report must cite)."""
    with open(HERE) as f:
        for number, line in enumerate(f, start=1):
            if text in line and "line_of" not in line:
                return f"{HERE}:{number}"
    raise AssertionError(text)


class Classifier(nn.Module):
    """The planted bug: log(softmax(logits)) underflows to log(0) for large logits."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        p = fw.softmax(self.fc(x) * 1000.0, dim=-1)
        return fw.log(p)  # planted: log of softmax


class Standardise(nn.Module):
    """The planted bug: dividing by the std of a feature that does not vary."""

    def forward(self, x):
        return (x - x.mean(0)) / x.std(0)  # planted: zero variance


class Root(nn.Module):
    """sqrt is fine forward at 0, but its gradient 1/(2 sqrt x) is infinite there."""

    def forward(self, x):
        return fw.sqrt(x * x)  # planted: sqrt at 0


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = Standardise()
        self.head = Classifier()
        self.root = Root()


def test_log_of_underflowed_softmax_names_op_module_and_line():
    net = Net()
    x = fw.tensor(np.random.default_rng(0).normal(0, 10, (5, 4)).astype(np.float32))
    with pytest.raises(AnomalyError) as caught, detect_anomaly():
        net.head(x)
    err = caught.value
    assert isinstance(err, FwError)
    assert (err.op, err.module, err.phase, err.kind) == ("log", "head", "forward", "Inf")
    assert err.line == line_of("planted: log of softmax")
    assert "softmax that underflowed" in err.hint and "log_softmax" in err.hint
    assert err.stats["outputs"][0]["neginf"] > 0 and err.stats["inputs"][0]["zeros"] > 0
    assert "float32[5, 3]" in str(err)


def test_division_by_zero_variance_feature():
    net = Net()
    x = fw.tensor([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0]])
    with pytest.raises(AnomalyError) as caught, detect_anomaly():
        net.norm(x)
    err = caught.value
    assert (err.op, err.module, err.kind) == ("div", "norm", "NaN")
    assert err.line == line_of("planted: zero variance")
    assert "zero variance" in err.hint and "std" in err.hint and "epsilon" in err.hint
    assert err.stats["inputs"][1] == health_stats(x.std(0))


def test_backward_inf_is_reported_at_the_forward_line():
    net = Net()
    x = fw.tensor([0.0, 1.0, 2.0], requires_grad=True)
    with detect_anomaly():
        y = net.root(x)  # finite forward: sqrt(0) = 0
        with pytest.raises(AnomalyError) as caught:
            y.sum().backward()
    err = caught.value
    assert (err.op, err.module, err.phase, err.kind) == ("sqrt", "root", "backward", "Inf")
    assert err.line == line_of("planted: sqrt at 0")
    assert "gradient of sqrt" in err.hint
    assert err.stats["outputs"][0]["posinf"] == 1


def test_backward_only_skips_forward_and_forward_only_skips_backward():
    x = fw.tensor([0.0, 4.0], requires_grad=True)
    with detect_anomaly(backward=False):
        fw.sqrt(x).sum().backward()  # inf gradient, unchecked
    with detect_anomaly(forward=False):
        fw.log(fw.tensor([0.0]))  # -inf output, unchecked


def test_only_the_producer_is_reported_not_the_ops_that_carry_it():
    x = fw.tensor([0.0, 1.0])
    with warnings.catch_warnings(record=True) as seen, detect_anomaly(mode="warn") as found:
        warnings.simplefilter("always")
        y = fw.log(x)                  # produces -inf
        z = (y * 2 + 1).exp()          # carries it along, exp(-inf) = 0
        v = fw.log(x + 1) - y          # finite - (-inf) = +inf: carried along
        n = y - y                      # -inf - -inf = NaN: arithmetic made a NaN
        (n * 2 + v).sum()              # carries the NaN along
    assert [r.op for r in found.reports] == ["log", "sub"]
    assert found.reports[1].kind == "NaN" and len(seen) == 2
    assert "log" in str(seen[0].message) and np.isfinite(z.numpy()).all()


def test_intentional_minus_inf_masks_do_not_trigger():
    scores = fw.randn(4, 4)
    with detect_anomaly():
        causal = fw.full((4, 4), float("-inf")).triu(1)
        p = fw.softmax(scores + causal, dim=-1)
        masked = scores.masked_fill(fw.tensor(np.eye(4, dtype=bool)), float("-inf"))
        picked = fw.where(scores > 0, scores, float("-inf"))
        fw.ops.nn.safe_softmax(fw.full((2, 3), float("-inf")), -1)  # a fully masked row
    assert np.isfinite(p.numpy()).all()
    assert np.isneginf(masked.numpy()).sum() == 4 and np.isneginf(picked.numpy()).any()


def test_nan_arriving_from_the_data_is_reported_once():
    data = fw.tensor([1.0, float("nan")])
    with pytest.raises(AnomalyError, match="NaN in its inputs from outside"), detect_anomaly():
        data * 2
    with warnings.catch_warnings(record=True), detect_anomaly(mode="warn") as found:
        warnings.simplefilter("always")
        (data * 2 + 1).sum()
    assert len(found.reports) == 1 and found.reports[0].op == "mul"


def test_every_samples_ops():
    x = fw.tensor([0.0, 1.0])
    with detect_anomaly(every=1000):  # the log is not among the checked ops
        fw.log(x)
    with pytest.raises(AnomalyError), detect_anomaly(every=2):
        for _ in range(2):
            fw.log(x)


def test_pdb_mode_stops_with_the_event(monkeypatch):
    stops = []

    class FakePdb:
        def set_trace(self, frame):
            stops.append(frame.f_locals["event"])

    monkeypatch.setattr(fw_debugger.anomaly.pdb, "Pdb", FakePdb)
    with detect_anomaly(mode="pdb") as found:
        fw.log(fw.tensor([0.0]))
    assert stops[0].op.name == "log" and found.reports[0].op == "log"


def test_bad_arguments_and_cleanup():
    with pytest.raises(FwError, match="unknown mode"):
        detect_anomaly(mode="loud")
    with pytest.raises(FwError, match="every"):
        detect_anomaly(every=0)
    with detect_anomaly():
        assert "fw_debugger.anomaly" in fw.inspectors.active()
    assert "fw_debugger.anomaly" not in fw.inspectors.active()


def test_decorator_form():
    @detect_anomaly()
    def step():
        return fw.log(fw.tensor([0.0]))

    with pytest.raises(AnomalyError):
        step()


def test_debug_context_raises_with_the_default_settings():
    fw.plugins.load()
    with pytest.raises(AnomalyError) as caught, fw.context("debug"):
        fw.sqrt(fw.tensor([-1.0]))
    assert caught.value.op == "sqrt" and caught.value.kind == "NaN"


def test_health_stats_counts():
    stats = health_stats(fw.tensor([0.0, -2.0, 4.0, float("nan"), float("inf"), -float("inf")]))
    assert stats == {"size": 6, "finite": 3, "nan": 1, "posinf": 1, "neginf": 1, "zeros": 1,
                     "min": -2.0, "max": 4.0, "mean": pytest.approx(2 / 3)}
    assert health_stats(fw.tensor([float("nan")]))["min"] is None
    assert health_stats(fw.tensor([1, 0]))["zeros"] == 1


def test_the_overflow_advice_is_for_ops_whose_formula_grows_like_exp():
    big = fw.tensor([100.0, 1.0])
    with pytest.raises(AnomalyError) as caught, detect_anomaly():
        fw.exp(big)
    assert caught.value.kind == "Inf" and "overflowed (inputs up to 100)" in caught.value.hint
    with pytest.raises(AnomalyError) as caught, detect_anomaly():
        big * fw.tensor([1e38, 1.0])  # a product overflows too, but max-subtraction is no fix
    assert caught.value.op == "mul" and "subtract the max" not in caught.value.hint
