"""Gradient health: per-layer gradient norms, update/weight ratios, dead and saturated units.

``gradient_health(model)`` after ``loss.backward()`` in a raw loop, or the ``GradientHealth``
callback in ``Model.fit``. Dead-ReLU and saturation fractions come from the ops' explanation
anchors: while :func:`watch_activations` is active, every op whose anchor has a ``region``
(relu's ``x <= 0``, sigmoid's ``|x| > 5``, ...) records which fraction of its inputs fell in it,
per module path. The watch is an inspector, so it costs nothing per op when it is off.
"""

from __future__ import annotations

import contextlib
import math
import warnings
import weakref
from dataclasses import asdict, dataclass, field

import numpy as np

import fw_core as fw
from fw_core.records import Inspector
from fw_core.training.callbacks import Callback

__all__ = ["INSPECTOR", "ActivationWatch", "ExplodingGradientWarning", "GradientHealth",
           "GradientHealthWarning", "HealthReport", "LayerHealth", "VanishingGradientWarning",
           "DeadUnitsWarning", "gradient_health", "watch_activations"]

VANISHING = 1e-7  # a layer gradient norm below this is vanishing
EXPLODING = 1e3  # above this, or 10x the previous check's, it is exploding
GROWTH = 10.0
MOSTLY_DEAD = 0.9  # dead or saturated fractions at or above this are warned about


class GradientHealthWarning(UserWarning):
    """Base of the warnings gradient_health emits (filter them with this category)."""


class VanishingGradientWarning(GradientHealthWarning):
    """A layer's gradient norm is below 1e-7: it has practically stopped learning."""


class ExplodingGradientWarning(GradientHealthWarning):
    """A layer's gradient norm is above 1e3 or grew 10x since the previous check."""


class DeadUnitsWarning(GradientHealthWarning):
    """Most inputs of a ReLU are at or below 0 (dead), or of a sigmoid/tanh saturated."""


# -- activation watch (an inspector) ---------------------------------------------------------------
class ActivationWatch:
    """Counts, per (module path, op), how many inputs fell in the op's anchor region."""

    def __init__(self):
        self.counts: dict[tuple[str, str], list[int]] = {}  # -> [in region, total]
        self.depth = 0  # > 0 while the watched model's forward runs (None model: always)

    def record(self, event) -> None:
        with fw.no_grad():
            mask = np.asarray(event.op.anchor.region(*event.inputs), dtype=bool)
        row = self.counts.setdefault((event.module, event.op.name), [0, 0])
        row[0] += int(mask.sum())
        row[1] += mask.size

    def fractions(self) -> dict[str, dict[str, float]]:
        """``{module path: {op name: fraction of inputs in the op's region}}``."""
        out: dict[str, dict[str, float]] = {}
        for (module, op), (hit, total) in self.counts.items():
            if total:
                out.setdefault(module, {})[op] = hit / total
        return out


_watches: list[ActivationWatch] = []


def _on_op(event) -> None:
    if event.phase != "forward" or event.op.anchor.region is None:
        return
    for watch in _watches:
        if watch.depth > 0:
            watch.record(event)


#: registered by the plugin as "fw_debugger.health"; active only inside watch_activations
INSPECTOR = Inspector("fw_debugger.health", on_op=_on_op)


def _root(model):
    """The nn.Module of a Module or of a training Model."""
    return getattr(model, "module", model)


@contextlib.contextmanager
def watch_activations(model=None):
    """Record anchor-region fractions (dead ReLU, saturated sigmoid/tanh...) per module path.

    With a model, only ops run inside its forward count (not the loss); yields the
    :class:`ActivationWatch`. Compiled functions run eagerly while it is active.
    """
    watch = ActivationWatch()
    handles = []
    if model is None:
        watch.depth = 1
    else:
        root = _root(model)

        def enter(module, args):
            watch.depth += 1

        def leave(module, args, out):
            watch.depth -= 1

        handles = [root.register_forward_pre_hook(enter), root.register_forward_hook(leave)]
    _watches.append(watch)
    fw.inspectors.activate(INSPECTOR)
    try:
        yield watch
    finally:
        _watches.remove(watch)
        if not _watches:
            fw.inspectors.deactivate(INSPECTOR)
        for handle in handles:
            handle.remove()


# -- the report ------------------------------------------------------------------------------------
@dataclass
class LayerHealth:
    """One module's health. Norms are L2 over all its own parameters (None: no gradient)."""

    layer: str
    grad_norm: float | None = None
    weight_norm: float | None = None
    update_ratio: float | None = None
    dead_fraction: float | None = None
    saturated_fraction: float | None = None
    regions: dict[str, float] = field(default_factory=dict)


@dataclass
class HealthReport:
    """Per-layer health and the warnings raised; ``str()`` is a table, ``to_records()`` rows."""

    layers: list[LayerHealth]
    warnings: list[str] = field(default_factory=list)
    step: int | None = None

    def __getitem__(self, layer: str) -> LayerHealth:
        for row in self.layers:
            if row.layer == layer:
                return row
        raise KeyError(f"no layer {layer!r} in the report; layers: "
                       f"{', '.join(r.layer for r in self.layers)}")

    def to_records(self) -> list[dict]:
        """One flat dict per layer (regions as ``region_<op>`` keys), for pandas."""
        rows = []
        for layer in self.layers:
            row = asdict(layer)
            for op, fraction in row.pop("regions").items():
                row[f"region_{op}"] = fraction
            rows.append({"step": self.step, **row})
        return rows

    def __str__(self) -> str:
        def fmt(value, spec):
            width = spec.partition(".")[0]
            return format("-", f">{width}") if value is None else format(value, spec)

        head = f"gradient health{'' if self.step is None else f' (step {self.step})'}"
        lines = [head, f"{'layer':<24}{'grad norm':>11}{'weight norm':>13}{'update/w':>10}"
                       f"{'dead':>7}{'saturated':>11}"]
        for r in self.layers:
            lines.append(f"{_label(r.layer):<24}{fmt(r.grad_norm, '11.3g')}"
                         f"{fmt(r.weight_norm, '13.3g')}{fmt(r.update_ratio, '10.2g')}"
                         f"{fmt(r.dead_fraction, '7.0%')}{fmt(r.saturated_fraction, '11.0%')}")
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def _label(path: str) -> str:
    return path or "(root)"


# -- measuring -------------------------------------------------------------------------------------
_memory: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # module -> last check's state


def snapshot(model) -> dict[str, np.ndarray]:
    """A float64 host copy of every parameter, by name (to measure the next update)."""
    return {name: np.array(p.detach().numpy(), dtype=np.float64)
            for name, p in _root(model).named_parameters()}


def _norm(array) -> float:
    return float(np.linalg.norm(np.asarray(array, dtype=np.float64)))


def _lr_of(optimizer) -> dict[int, float]:
    return {id(p): group["lr"] for group in optimizer.param_groups for p in group["params"]}


def _parameter_rows(root, optimizer, previous) -> dict[str, LayerHealth]:
    """Grad norm, weight norm and update ratio per module that owns parameters."""
    lrs = _lr_of(optimizer) if optimizer is not None else {}
    # layer -> [grad^2, weight^2, update^2, estimate^2, previous weight^2, has grad]
    sums: dict[str, list[float]] = {}
    for name, p in root.named_parameters():
        acc = sums.setdefault(name.rpartition(".")[0], [0.0] * 6)
        weights = np.asarray(p.detach().numpy(), dtype=np.float64)
        acc[1] += float(np.sum(weights * weights))
        if p.grad is not None:
            grad = _norm(p.grad.detach().numpy())
            acc[0] += grad * grad
            acc[5] = 1.0
            acc[3] += (lrs.get(id(p), 0.0) * grad) ** 2
        if previous is not None and name in previous:
            acc[2] += float(np.sum((weights - previous[name]) ** 2))
            acc[4] += float(np.sum(previous[name] ** 2))
    rows = {}
    for layer, (g2, w2, u2, e2, p2, has_grad) in sums.items():
        weight = math.sqrt(w2)
        if optimizer is not None:
            update = math.sqrt(e2) / weight if weight else None
        elif previous is not None:
            update = math.sqrt(u2 / p2) if p2 else None
        else:
            update = None
        rows[layer] = LayerHealth(layer, math.sqrt(g2) if has_grad else None, weight, update)
    return rows


def _activation_rows(rows, fractions) -> None:
    """Add dead (anchors whose region has no gradient, relu's) and saturated (saturation
    anchors) fractions to the rows."""
    for module, by_op in fractions.items():
        row = rows.setdefault(module, LayerHealth(module))
        row.regions.update(by_op)
        anchors = {op: fw.ops.get(op).anchor for op in by_op}
        dead = [f for op, f in by_op.items() if anchors[op].dead]
        if dead:
            row.dead_fraction = max(dead)
        saturated = [f for op, f in by_op.items() if anchors[op].kind == "saturation"]
        if saturated:
            row.saturated_fraction = max(saturated)


def _diagnose(rows, last_norms) -> list[tuple[str, type]]:
    found = []
    for row in rows:
        name, g = _label(row.layer), row.grad_norm
        if g is not None:
            before = last_norms.get(row.layer)
            if g < VANISHING:
                found.append((f"vanishing gradient in layer {name}: norm {g:.3g} < {VANISHING:g}"
                              " (saturated activations or too deep without residuals/norms?)",
                              VanishingGradientWarning))
            elif g > EXPLODING:
                found.append((f"exploding gradient in layer {name}: norm {g:.3g} > "
                              f"{EXPLODING:g} (lower the learning rate or clip gradients)",
                              ExplodingGradientWarning))
            elif before and g > GROWTH * before:
                found.append((f"exploding gradient in layer {name}: norm grew {g / before:.0f}x "
                              f"since the previous check ({before:.3g} -> {g:.3g})",
                              ExplodingGradientWarning))
        if row.dead_fraction is not None and row.dead_fraction >= MOSTLY_DEAD:
            found.append((f"dead ReLU in layer {name}: {row.dead_fraction:.0%} of its inputs are "
                          "<= 0 (lower the learning rate, check the init or use leaky_relu)",
                          DeadUnitsWarning))
        if row.saturated_fraction is not None and row.saturated_fraction >= MOSTLY_DEAD:
            found.append((f"saturated activation in layer {name}: {row.saturated_fraction:.0%} "
                          "of its inputs are where the gradient is nearly 0 (normalise inputs)",
                          DeadUnitsWarning))
    return found


def gradient_health(model, optimizer=None, inputs=None, activations=None, previous=None,
                    warn: bool = True, step: int | None = None) -> HealthReport:
    """Report each layer's gradient health; call it after ``loss.backward()``.

    Args:
        model: an nn.Module or a training Model.
        optimizer: if given, update/weight = lr * grad norm / weight norm (the SGD step).
        inputs: a batch to run once (no grad) under :func:`watch_activations` to measure dead
            and saturated fractions; or pass ``activations`` from your own watch.
        previous: a :func:`snapshot` of the weights: update/weight = ||w - previous|| / ||w||.
            Without it or an optimizer, the weights of this model's previous check are used.
        warn: also emit the warnings with ``warnings.warn`` (categories in this module).
        step: a step number shown in the report.
    """
    root = _root(model)
    memory = _memory.setdefault(root, {})
    if previous is None and optimizer is None:
        previous = memory.get("weights")
    if inputs is not None:
        with watch_activations(root) as activations, fw.no_grad():
            root(*inputs) if isinstance(inputs, (tuple, list)) else root(inputs)
    rows = _parameter_rows(root, optimizer, previous)
    if activations is not None:
        _activation_rows(rows, activations.fractions())
    order = {path: i for i, (path, _) in enumerate(root.named_modules())}
    layers = sorted(rows.values(), key=lambda r: order.get(r.layer, len(order)))
    found = _diagnose(layers, memory.get("grad_norms", {}))
    memory["grad_norms"] = {r.layer: r.grad_norm for r in layers if r.grad_norm is not None}
    memory["weights"] = snapshot(root)
    if warn:
        for message, category in found:
            warnings.warn(message, category, stacklevel=2)
    return HealthReport(layers, [message for message, _ in found], step)


class GradientHealth(Callback):
    """``model.fit(..., callbacks=[GradientHealth(every=10)])``: a HealthReport every ``every``
    batches, in ``.reports``. Checked batches run with the activation watch (eagerly, not
    compiled) and measure the true update of that step (weights before and after it)."""

    def __init__(self, every: int = 1, activations: bool = True, warn: bool = True,
                 verbose: bool = False):
        if every < 1:
            raise ValueError(f"every must be >= 1, got {every}")
        self.every, self.activations, self.warn, self.verbose = every, activations, warn, verbose
        self.reports: list[HealthReport] = []
        self._seen, self._watch, self._before, self._activations = 0, None, None, None

    def on_train_begin(self, logs=None):
        self.reports, self._seen = [], 0

    def on_train_batch_begin(self, batch, logs=None):
        if self._seen % self.every:
            return
        self._before = snapshot(self.model)
        if self.activations:
            self._watch = contextlib.ExitStack()
            self._activations = self._watch.enter_context(watch_activations(self.model))

    def on_train_batch_end(self, batch, logs=None):
        step, self._seen = self._seen, self._seen + 1
        if step % self.every:
            return
        activations, self._activations = self._activations, None
        self._close()
        report = gradient_health(self.model, activations=activations, previous=self._before,
                                 warn=self.warn, step=step)
        self.reports.append(report)
        if self.verbose:
            print(report)

    def on_train_end(self, logs=None):
        self._close()

    def _close(self):
        if self._watch is not None:
            self._watch.close()
            self._watch = None
