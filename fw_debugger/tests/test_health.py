"""Gradient health: dead ReLUs and vanishing gradients named by layer, update ratios, the
fit callback, and the activation watch."""

import warnings

import numpy as np
import pytest

import fw_core as fw
from fw_debugger.health import (
    INSPECTOR,
    DeadUnitsWarning,
    ExplodingGradientWarning,
    GradientHealth,
    VanishingGradientWarning,
    gradient_health,
    snapshot,
    watch_activations,
)


@pytest.fixture(autouse=True)
def _seed():
    fw.manual_seed(0)


def _backward(model, x):
    model.zero_grad()
    model(x).sum().backward()


def test_dead_relu_layer_is_reported_by_name():
    model = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 1))
    with fw.no_grad():
        model[0].bias.copy_(fw.full((8,), -100.0))  # every pre-activation far below 0
    x = fw.randn(16, 4)
    _backward(model, x)
    with pytest.warns(DeadUnitsWarning, match="dead ReLU in layer 1"):
        report = gradient_health(model, inputs=x)
    assert report["1"].dead_fraction == 1.0 and report["1"].regions == {"relu": 1.0}
    assert any("layer 1" in w for w in report.warnings)
    assert "dead" in str(report) and "100%" in str(report)


def test_healthy_relu_has_a_partial_dead_fraction_and_no_warning():
    model = fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU(), fw.nn.Linear(8, 1))
    x = fw.randn(64, 4)
    _backward(model, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = gradient_health(model, inputs=x)
    assert 0.2 < report["1"].dead_fraction < 0.8
    assert report["0"].grad_norm > 0 and report["0"].weight_norm > 0
    records = report.to_records()
    assert [r["layer"] for r in records] == ["0", "1", "2"]
    assert records[1]["region_relu"] == report["1"].dead_fraction


def test_deep_sigmoid_stack_warns_vanishing_naming_the_first_layer():
    layers = []
    for _ in range(20):
        layers += [fw.nn.Linear(6, 6), fw.nn.Sigmoid()]
    model = fw.nn.Sequential(*layers)
    _backward(model, fw.randn(4, 6))
    with pytest.warns(VanishingGradientWarning, match=r"vanishing gradient in layer 0:"):
        report = gradient_health(model)
    assert report["0"].grad_norm < 1e-7 < report["38"].grad_norm


def test_exploding_by_growth_between_checks():
    model = fw.nn.Linear(3, 1)
    x = fw.randn(2, 3)
    _backward(model, x)
    gradient_health(model, warn=False)
    _backward(model, x * 50.0)  # the weight's gradient grows 50x
    with pytest.warns(ExplodingGradientWarning, match=r"layer \(root\): norm grew \d+x"):
        gradient_health(model)


def test_update_ratio_from_optimizer_and_from_snapshot():
    model = fw.nn.Linear(3, 2)
    opt = fw.optim.SGD(model.parameters(), lr=0.1)
    _backward(model, fw.randn(5, 3))
    grads = [p.grad.numpy() for p in model.parameters()]
    weight = np.sqrt(sum((p.detach().numpy().astype(np.float64) ** 2).sum()
                         for p in model.parameters()))
    grad = np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads))
    estimate = gradient_health(model, optimizer=opt, warn=False)[""].update_ratio
    assert estimate == pytest.approx(0.1 * grad / weight, rel=1e-5)
    before = snapshot(model)
    opt.step()
    measured = gradient_health(model, previous=before, warn=False)[""].update_ratio
    assert measured == pytest.approx(0.1 * grad / weight, rel=1e-2)


def test_watch_counts_only_inside_the_model_and_switches_off():
    model = fw.nn.Sequential(fw.nn.Linear(2, 3), fw.nn.Tanh())
    with watch_activations(model) as watch:
        assert INSPECTOR.name in fw.inspectors.active()
        model(fw.randn(4, 2))
        fw.relu(fw.randn(3))  # outside the model's forward: not counted
    assert INSPECTOR.name not in fw.inspectors.active()
    assert list(watch.fractions()) == ["1"] and set(watch.fractions()["1"]) == {"tanh"}


def test_fit_callback_reports_every_n_batches():
    net = fw.nn.Sequential(fw.nn.Linear(3, 4), fw.nn.Sigmoid(), fw.nn.Linear(4, 1))
    model = fw.training.Model(net)
    model.compile(optimizer="sgd", loss="mse")
    health = GradientHealth(every=2)
    model.fit(fw.randn(24, 3), fw.randn(24, 1), batch_size=4, epochs=1, callbacks=[health],
              verbose=0)
    assert [r.step for r in health.reports] == [0, 2, 4]
    report = health.reports[-1]
    assert report["0"].grad_norm > 0 and report["0"].update_ratio > 0
    assert report["1"].saturated_fraction is not None
    assert INSPECTOR.name not in fw.inspectors.active()


def test_dead_units_come_from_the_contract_not_the_op_name():
    assert fw.ops.get("relu").anchor.dead
    assert not fw.ops.get("abs").anchor.dead  # a kink at one point kills nothing
