"""Every scheduler gives torch 2.13's learning rates (and momenta), step for step, and resumes
from its state dict."""

import math
import warnings

import numpy as np
import pytest

import fw_core as fw
import fw_core.optim as optim
from fw_core.errors import FwError
from fw_core.optim import ArgumentError
from fw_core.optim import lr_scheduler as sched

torch = pytest.importorskip("torch")

LRS = (0.1, 0.02)  # two parameter groups with different learning rates


def _optimizer(lib, name="SGD", **kwargs):
    """An optimizer of ``lib`` (fw.optim or torch.optim) with two groups of one parameter."""
    make = fw.tensor if lib is optim else torch.tensor
    groups = [{"params": [make([1.0, 2.0], requires_grad=True)], "lr": lr} for lr in LRS]
    return getattr(lib, name)(groups, **kwargs)


def _schedule(lib, build, steps, metrics=None):
    """The learning rates (and momentum settings) after building and after each step."""
    opt_name, opt_kwargs, make = build
    opt = _optimizer(lib, opt_name, **opt_kwargs)
    scheduler = make(lib.lr_scheduler if lib is optim else torch.optim.lr_scheduler, opt)
    history = [_observe(opt, scheduler)]
    for t in range(steps):
        opt.step()
        scheduler.step(*([] if metrics is None else [metrics[t]]))
        history.append(_observe(opt, scheduler))
    return history


def _observe(opt, scheduler):
    groups = opt.param_groups
    return ([g["lr"] for g in groups], list(scheduler.get_last_lr()),
            [g.get("momentum") for g in groups], [g.get("betas") for g in groups])


SGD = ("SGD", {"momentum": 0.9}, )
ADAM = ("Adam", {})
SCHEDULES = {
    "step": (*SGD, lambda s, o: s.StepLR(o, step_size=7, gamma=0.5)),
    "multistep": (*SGD, lambda s, o: s.MultiStepLR(o, milestones=[10, 30, 30, 75], gamma=0.3)),
    "exponential": (*SGD, lambda s, o: s.ExponentialLR(o, gamma=0.95)),
    "cosine": (*SGD, lambda s, o: s.CosineAnnealingLR(o, T_max=30, eta_min=1e-3)),
    "cosine_full_period": (*SGD, lambda s, o: s.CosineAnnealingLR(o, T_max=100)),
    "linear_warmup": (*SGD, lambda s, o: s.LinearLR(o, start_factor=0.1, total_iters=10)),
    "linear_decay": (*SGD, lambda s, o: s.LinearLR(o, start_factor=1.0, end_factor=0.2,
                                                   total_iters=60)),
    "lambda": (*SGD, lambda s, o: s.LambdaLR(o, lambda epoch: 1.0 / (1 + epoch))),
    "lambda_per_group": (*SGD, lambda s, o: s.LambdaLR(o, [lambda e: 0.9 ** e,
                                                           lambda e: 1 + e % 3])),
    "onecycle_cos_sgd": (*SGD, lambda s, o: s.OneCycleLR(o, max_lr=[1.0, 0.5],
                                                         total_steps=100)),
    "onecycle_linear_adam": (*ADAM, lambda s, o: s.OneCycleLR(
        o, max_lr=0.3, epochs=10, steps_per_epoch=10, anneal_strategy="linear",
        pct_start=0.25, div_factor=10.0, final_div_factor=100.0)),
    "onecycle_three_phase": (*SGD, lambda s, o: s.OneCycleLR(
        o, max_lr=0.5, total_steps=100, three_phase=True, base_momentum=[0.8, 0.7],
        max_momentum=0.9)),
    "onecycle_no_momentum": (*ADAM, lambda s, o: s.OneCycleLR(
        o, max_lr=0.2, total_steps=120, cycle_momentum=False)),
    "sequential_warmup_cosine": (*SGD, lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.01, total_iters=10), s.CosineAnnealingLR(o, T_max=90)],
        milestones=[10])),
    "sequential_three": (*SGD, lambda s, o: s.SequentialLR(
        o, [s.ExponentialLR(o, gamma=0.9), s.StepLR(o, step_size=5, gamma=0.5),
            s.MultiStepLR(o, milestones=[5, 15, 15])], milestones=[20, 50])),
    "step_fractional_size": (*SGD, lambda s, o: s.StepLR(o, step_size=2.5, gamma=0.8)),
    "multiplicative": (*SGD, lambda s, o: s.MultiplicativeLR(o, lambda epoch: 0.95)),
    "multiplicative_per_group": (*SGD, lambda s, o: s.MultiplicativeLR(
        o, [lambda e: 0.9, lambda e: 1.0 + 0.01 * (e % 3)])),
    "constant": (*SGD, lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=4)),
    "constant_default": (*SGD, lambda s, o: s.ConstantLR(o)),
    "constant_zero_iters": (*SGD, lambda s, o: s.ConstantLR(o, factor=0.25, total_iters=0)),
    "polynomial": (*SGD, lambda s, o: s.PolynomialLR(o, total_iters=60, power=2.0)),
    "polynomial_default": (*SGD, lambda s, o: s.PolynomialLR(o)),
    "polynomial_sqrt": (*SGD, lambda s, o: s.PolynomialLR(o, total_iters=30, power=0.5)),
    "warm_restarts": (*SGD, lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=10)),
    "warm_restarts_mult": (*SGD, lambda s, o: s.CosineAnnealingWarmRestarts(
        o, T_0=5, T_mult=2, eta_min=1e-3)),
    "warm_restarts_mult3": (*ADAM, lambda s, o: s.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=3)),
    "cyclic_triangular_sgd": (*SGD, lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1,
                                                            step_size_up=7)),
    "cyclic_triangular2": (*SGD, lambda s, o: s.CyclicLR(
        o, base_lr=[0.01, 0.001], max_lr=[0.1, 0.05], step_size_up=5, step_size_down=10,
        mode="triangular2")),
    "cyclic_exp_range_adam": (*ADAM, lambda s, o: s.CyclicLR(
        o, base_lr=0.001, max_lr=0.01, step_size_up=6, mode="exp_range", gamma=0.97)),
    "cyclic_no_momentum_adagrad": ("Adagrad", {}, lambda s, o: s.CyclicLR(
        o, base_lr=0.01, max_lr=0.2, step_size_up=4, cycle_momentum=False)),
    "cyclic_scale_fn_cycle": (*SGD, lambda s, o: s.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=lambda x: 0.5 ** x)),
    "cyclic_scale_fn_iterations": (*ADAM, lambda s, o: s.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=8, step_size_down=2,
        scale_fn=lambda x: 1 / (1 + 0.01 * x), scale_mode="iterations")),
    "cyclic_momentum_bounds": (*SGD, lambda s, o: s.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=5, base_momentum=[0.7, 0.8],
        max_momentum=0.95, mode="triangular2")),
    "chained_constant_exponential": (*SGD, lambda s, o: s.ChainedScheduler(
        [s.ConstantLR(o, factor=0.1, total_iters=2), s.ExponentialLR(o, gamma=0.9)])),
    "chained_three": (*SGD, lambda s, o: s.ChainedScheduler(
        [s.CosineAnnealingLR(o, T_max=20), s.MultiplicativeLR(o, lambda e: 0.99),
         s.PolynomialLR(o, total_iters=50)], optimizer=o)),
    "chained_step_warmup": (*ADAM, lambda s, o: s.ChainedScheduler(
        [s.LinearLR(o, start_factor=0.2, total_iters=8), s.StepLR(o, step_size=15, gamma=0.3),
         s.MultiStepLR(o, milestones=[40, 70])])),
    "sequential_constant_polynomial": (*SGD, lambda s, o: s.SequentialLR(
        o, [s.ConstantLR(o, factor=0.1, total_iters=5), s.PolynomialLR(o, 40, power=1.5)],
        milestones=[5])),
    # (a SequentialLR of a ChainedScheduler fails in torch too: ChainedScheduler has no get_lr)
    "chained_of_sequential": (*SGD, lambda s, o: s.ChainedScheduler(
        [s.SequentialLR(o, [s.LinearLR(o, start_factor=0.1, total_iters=10),
                            s.ExponentialLR(o, gamma=0.97)], milestones=[10]),
         s.StepLR(o, step_size=20, gamma=0.5)])),
}


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_schedule_matches_torch_for_100_steps(name):
    mine = _schedule(optim, SCHEDULES[name], 100)
    theirs = _schedule(torch.optim, SCHEDULES[name], 100)
    assert mine == theirs


METRIC = [1.0 / (1 + t) if t < 30 else 0.03 + 0.01 * math.sin(t) for t in range(100)]
PLATEAU = {
    "min_rel": {},
    "min_abs": {"threshold_mode": "abs", "threshold": 1e-3, "patience": 3},
    "max_rel": {"mode": "max", "patience": 2, "factor": 0.5},
    "max_abs": {"mode": "max", "threshold_mode": "abs", "threshold": 0.01, "patience": 0},
    "cooldown_min_lr": {"patience": 1, "cooldown": 3, "factor": 0.5, "min_lr": [0.01, 0.001]},
    "min_lr_scalar": {"patience": 0, "factor": 0.3, "min_lr": 0.005, "eps": 1e-4},
}


@pytest.mark.parametrize("name", list(PLATEAU))
def test_reduce_lr_on_plateau_matches_torch(name):
    kwargs = PLATEAU[name]
    metric = [-m for m in METRIC] if kwargs.get("mode") == "max" else METRIC
    build = (*SGD, lambda s, o: s.ReduceLROnPlateau(o, **kwargs))
    mine = _schedule(optim, build, 100, metric)
    theirs = _schedule(torch.optim, build, 100, metric)
    assert mine == theirs
    assert mine[-1][0] != mine[0][0]  # the schedule did reduce


def test_onecycle_drives_adam_like_torch():
    """Adam's betas cycled by OneCycleLR change the update exactly as in torch."""
    values = np.random.default_rng(0).standard_normal((3, 4))
    results = []
    for lib, make in ((optim, fw.tensor), (torch.optim, torch.tensor)):
        p = make(values, requires_grad=True)
        opt = lib.Adam([p], lr=0.01)
        scheduler = lib.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=50)
        for t in range(50):
            g = np.random.default_rng(t).standard_normal((3, 4))
            p.grad = make(g)
            opt.step()
            scheduler.step()
        results.append(p.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10, atol=1e-12)


RESUMABLE = ["step", "cosine", "linear_warmup", "onecycle_linear_adam", "onecycle_three_phase",
             "sequential_warmup_cosine", "sequential_three", "lambda", "multiplicative",
             "constant", "polynomial", "warm_restarts_mult", "cyclic_triangular2",
             "cyclic_exp_range_adam", "cyclic_scale_fn_cycle", "chained_constant_exponential",
             "chained_three", "chained_of_sequential"]


@pytest.mark.parametrize("name", RESUMABLE)
def test_state_dict_resumes_the_schedule(name):
    whole = _schedule(optim, SCHEDULES[name], 100)
    opt_name, opt_kwargs, make = SCHEDULES[name]
    opt = _optimizer(optim, opt_name, **opt_kwargs)
    scheduler = make(sched, opt)
    for _ in range(40):
        opt.step()
        scheduler.step()
    opt_state, sched_state = opt.state_dict(), scheduler.state_dict()
    fresh = _optimizer(optim, opt_name, **opt_kwargs)
    resumed = make(sched, fresh)
    fresh.load_state_dict(opt_state)
    resumed.load_state_dict(sched_state)
    history = []
    for _ in range(60):
        fresh.step()
        resumed.step()
        history.append(_observe(fresh, resumed))
    assert history == whole[41:]


def test_plateau_state_dict_resumes():
    build = (*SGD, lambda s, o: s.ReduceLROnPlateau(o, patience=1, cooldown=2))
    whole = _schedule(optim, build, 100, METRIC)
    opt = _optimizer(optim, "SGD", momentum=0.9)
    scheduler = build[2](sched, opt)
    for t in range(50):
        scheduler.step(METRIC[t])
    fresh = _optimizer(optim, "SGD", momentum=0.9)
    fresh.load_state_dict(opt.state_dict())
    resumed = build[2](sched, fresh)
    resumed.load_state_dict(scheduler.state_dict())
    for t in range(50, 100):
        resumed.step(fw.tensor(METRIC[t]))  # a 0-d tensor metric works too
    assert resumed.get_last_lr() == whole[-1][1]


def test_stepping_the_scheduler_before_the_optimizer_warns():
    opt = _optimizer(optim)
    scheduler = sched.StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match="before optimizer.step"):
        scheduler.step()
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scheduler.step()


def test_explicit_epoch_uses_the_closed_form_and_warns():
    opt = _optimizer(optim)
    scheduler = sched.StepLR(opt, step_size=10, gamma=0.5)
    opt.step()
    with pytest.warns(UserWarning, match="deprecated"):  # PyTorch's category
        scheduler.step(25)
    assert scheduler.get_last_lr() == [0.1 * 0.25, 0.02 * 0.25]


@pytest.mark.parametrize("build,match", [
    (lambda o: sched.StepLR(o, step_size=0), "step_size must be a positive number"),
    (lambda o: sched.MultiStepLR(o, milestones=[1.5]), "milestones must be integers"),
    (lambda o: sched.LinearLR(o, start_factor=0.0), r"start_factor must be in \(0, 1\]"),
    (lambda o: sched.LinearLR(o, end_factor=1.5), r"end_factor must be in \[0, 1\]"),
    (lambda o: sched.CosineAnnealingLR(o, T_max=0), "T_max must be a positive"),
    (lambda o: sched.OneCycleLR(o, max_lr=0.1), "give total_steps"),
    (lambda o: sched.OneCycleLR(o, max_lr=0.1, total_steps=10, pct_start=1.5), "pct_start"),
    (lambda o: sched.OneCycleLR(o, max_lr=0.1, total_steps=10, anneal_strategy="exp"),
     "anneal_strategy"),
    (lambda o: sched.OneCycleLR(o, max_lr=[0.1], total_steps=10), "max_lr has 1 values"),
    (lambda o: sched.ReduceLROnPlateau(o, factor=1.0), "factor must be < 1"),
    (lambda o: sched.ReduceLROnPlateau(o, mode="maximum"), "mode must be 'min' or 'max'"),
    (lambda o: sched.ReduceLROnPlateau(o, threshold_mode="relative"), "threshold_mode"),
    (lambda o: sched.SequentialLR(o, [sched.StepLR(o, 2)], milestones=[3]),
     "one milestone fewer"),
    (lambda o: sched.SequentialLR(o, [sched.ReduceLROnPlateau(o), sched.StepLR(o, 2)], [3]),
     "needs a metric"),
    (lambda o: sched.SequentialLR(o, [sched.StepLR(_optimizer(optim), 2)], []),
     "another optimizer"),
    (lambda o: sched.StepLR(o, step_size=3, last_epoch=5), "has no 'initial_lr'"),
])
def test_bad_scheduler_arguments_are_refused_with_a_fix(build, match):
    with pytest.raises(ArgumentError, match=match):
        build(_optimizer(optim))


def test_onecycle_refuses_steps_past_total_steps():
    opt = _optimizer(optim)
    scheduler = sched.OneCycleLR(opt, max_lr=0.1, total_steps=3)
    for _ in range(3):
        opt.step()
        scheduler.step()
    with pytest.raises(ArgumentError, match="stepped 4 times, but total_steps is 3") as err:
        scheduler.step()
    assert "fix:" in str(err.value)


def test_onecycle_momentum_needs_an_optimizer_with_momentum():
    with pytest.raises(ArgumentError, match="cycle_momentum=False"):
        sched.OneCycleLR(_optimizer(optim, "Adagrad"), max_lr=0.1, total_steps=10)


def test_scheduler_needs_an_fw_optimizer():
    with pytest.raises(FwError, match="needs an fw optimizer"):
        sched.StepLR(torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1), 3)


def test_warm_restarts_with_fractional_epochs_match_torch():
    """SGDR stepped after every batch with step(epoch + i / batches), jumping back at times."""
    epochs = [e + i / 7 for e in range(12) for i in range(7)] + [3, 0.5, 40.25, 2]
    history = []
    for lib in (optim, torch.optim):
        opt = _optimizer(lib, "SGD", momentum=0.9)
        scheduler = lib.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2,
                                                                 eta_min=1e-4)
        lrs = []
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no deprecation warning for an epoch here
            for epoch in epochs:
                opt.step()
                scheduler.step(epoch)
                lrs.append((scheduler.get_last_lr(), scheduler.T_cur, scheduler.T_i,
                            scheduler.last_epoch))
        history.append(lrs)
    assert history[0] == history[1]


def test_explicit_epoch_warns_like_torch():
    caught = []
    for lib in (optim, torch.optim):
        opt = _optimizer(lib)
        scheduler = lib.lr_scheduler.PolynomialLR(opt, total_iters=10)
        opt.step()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            scheduler.step(4)
        caught.append(([w.category for w in seen], scheduler.get_last_lr()))
    assert caught[0] == caught[1] and caught[0][0] == [UserWarning]


@pytest.mark.parametrize("name", ["StepLR", "ExponentialLR", "CosineAnnealingLR"])
def test_verbose_is_refused_as_torch_2_13_refuses_it(name):
    """torch 2.13 removed the deprecated verbose argument: passing it is a TypeError there."""
    args = {"StepLR": (3,), "ExponentialLR": (0.9,), "CosineAnnealingLR": (10,)}[name]
    for lib in (optim, torch.optim):
        with pytest.raises(TypeError, match="verbose"):
            getattr(lib.lr_scheduler, name)(_optimizer(lib), *args, verbose=True)


@pytest.mark.parametrize("build,match", [
    (lambda o: sched.ConstantLR(o, factor=1.5), r"factor must be in \[0, 1\]"),
    (lambda o: sched.ConstantLR(o, factor=-0.5), r"factor must be in \[0, 1\]"),
    (lambda o: sched.CosineAnnealingWarmRestarts(o, T_0=0), "T_0 must be a positive integer"),
    (lambda o: sched.CosineAnnealingWarmRestarts(o, T_0=2.5), "T_0 must be a positive integer"),
    (lambda o: sched.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=0), "T_mult must be"),
    (lambda o: sched.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=1.5), "T_mult must be"),
    (lambda o: sched.CosineAnnealingWarmRestarts(o, T_0=5, eta_min="0"), "eta_min must be"),
    (lambda o: sched.CosineAnnealingWarmRestarts(o, T_0=5).step(-1), "epoch must be >= 0"),
    (lambda o: sched.CyclicLR(o, 0.01, 0.1, mode="sine"), "mode must be one of"),
    (lambda o: sched.CyclicLR(o, [0.01], 0.1), "base_lr has 1 values"),
    (lambda o: sched.CyclicLR(_optimizer(optim, "Adagrad"), 0.01, 0.1), "cycle_momentum=False"),
    (lambda o: sched.ChainedScheduler([]), "needs at least one scheduler"),
    (lambda o: sched.ChainedScheduler([sched.StepLR(o, 2), sched.ReduceLROnPlateau(o)]),
     "needs a metric"),
    (lambda o: sched.ChainedScheduler([sched.StepLR(o, 2), sched.StepLR(_optimizer(optim), 2)]),
     "another optimizer"),
    (lambda o: sched.MultiplicativeLR(o, [lambda e: 0.9]), "lr_lambda has 1 values"),
    (lambda o: sched.MultiplicativeLR(o, 0.9), "lr_lambda must be callable"),
])
def test_bad_arguments_of_the_new_schedulers_are_refused_with_a_fix(build, match):
    """Each is refused by torch too (ValueError, TypeError, or a ZeroDivisionError later)."""
    with pytest.raises(ArgumentError, match=match) as err:
        build(_optimizer(optim))
    assert "fix:" in str(err.value)


def test_callable_object_state_is_saved_functions_are_not():
    class Factor:
        def __init__(self):
            self.rate = 0.9

        def __call__(self, epoch):
            return self.rate

    opt = _optimizer(optim)
    scheduler = sched.MultiplicativeLR(opt, [Factor(), lambda e: 0.5])
    scheduler.lr_lambdas[0].rate = 0.7
    saved = scheduler.state_dict()
    assert saved["lr_lambdas"] == [{"rate": 0.7}, None]
    fresh = sched.MultiplicativeLR(_optimizer(optim), [Factor(), lambda e: 0.5])
    fresh.load_state_dict(saved)
    assert fresh.lr_lambdas[0].rate == 0.7


@pytest.mark.parametrize("base", ["LRScheduler", "_LRScheduler"])
def test_a_custom_scheduler_subclass_runs_as_in_torch(base):
    """User code subclasses LRScheduler (or its old name _LRScheduler) and writes get_lr."""
    histories = []
    for lib in (optim, torch.optim):
        class Halving(getattr(lib.lr_scheduler, base)):
            def get_lr(self):
                return [lr * 0.5 ** (self.last_epoch // 3) for lr in self.base_lrs]

        opt = _optimizer(lib)
        scheduler = Halving(opt)
        lrs = []
        for _ in range(10):
            opt.step()
            scheduler.step()
            lrs.append(scheduler.get_last_lr())
        histories.append(lrs)
    assert histories[0] == histories[1]
