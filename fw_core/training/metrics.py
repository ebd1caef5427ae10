"""Streaming metrics for fit/evaluate: update per batch, read the result per epoch.

Each metric keeps running sums on the host, so a result is exact over the whole epoch (not an
average of batch averages).
"""

from __future__ import annotations

import numpy as np

from ..errors import FwError


def _host(t) -> np.ndarray:
    return np.asarray(t.detach().__array__() if hasattr(t, "detach") else t)


class Metric:
    """Base class: ``reset()``, ``update(output, target)``, ``result() -> float``."""

    name = "metric"

    def reset(self) -> None:
        raise NotImplementedError

    def update(self, output, target) -> None:
        raise NotImplementedError

    def result(self) -> float:
        raise NotImplementedError


class Accuracy(Metric):
    """Fraction of samples whose arg-max class equals the target (or, for one output column,
    whose sigmoid > 0.5 prediction equals a 0/1 target)."""

    name = "accuracy"

    def reset(self) -> None:
        self.correct = 0
        self.count = 0

    def update(self, output, target) -> None:
        out, tgt = _host(output), _host(target)
        if out.ndim == tgt.ndim + 1 and out.shape[-1] > 1:
            predicted = out.argmax(-1)
        elif out.shape == tgt.shape and tgt.dtype.kind in "iub":
            predicted = out
        else:
            predicted = (out > 0).astype(tgt.dtype).reshape(tgt.shape)
        if tgt.ndim == out.ndim and out.ndim >= 2 and out.shape == tgt.shape and \
                tgt.dtype.kind == "f":
            tgt = tgt.argmax(-1)  # probability / one-hot targets
        self.correct += int((predicted == tgt).sum())
        self.count += int(tgt.size)

    def result(self) -> float:
        return self.correct / max(self.count, 1)


class TopKAccuracy(Metric):
    """Fraction of samples whose target is among the k highest-scoring classes."""

    def __init__(self, k: int = 5):
        self.k = k
        self.name = f"top{k}_accuracy"

    def reset(self) -> None:
        self.correct = 0
        self.count = 0

    def update(self, output, target) -> None:
        out, tgt = _host(output), _host(target)
        top = np.argpartition(-out, min(self.k, out.shape[-1]) - 1, axis=-1)[..., :self.k]
        self.correct += int((top == tgt[..., None]).any(-1).sum())
        self.count += int(tgt.size)

    def result(self) -> float:
        return self.correct / max(self.count, 1)


class _ConfusionMetric(Metric):
    """Precision / recall / F1 from a confusion matrix, macro-averaged over classes (or the
    positive class for binary outputs with one column)."""

    def __init__(self, average: str = "macro"):
        if average not in ("macro", "micro"):
            raise ValueError(f"{self.name}: average must be 'macro' or 'micro', got {average!r}")
        self.average = average

    def reset(self) -> None:
        self.tp: np.ndarray | None = None
        self.fp = self.fn = None

    def update(self, output, target) -> None:
        out, tgt = _host(output), _host(target).astype(np.int64).ravel()
        if out.ndim >= 2 and out.shape[-1] > 1:
            classes = out.shape[-1]
            pred = out.reshape(-1, classes).argmax(-1)
        else:
            classes = 2
            pred = (out.ravel() > 0).astype(np.int64)
        if self.tp is None:
            self.tp, self.fp, self.fn = (np.zeros(classes, np.int64) for _ in range(3))
        hit = pred == tgt
        np.add.at(self.tp, tgt[hit], 1)
        np.add.at(self.fp, pred[~hit], 1)
        np.add.at(self.fn, tgt[~hit], 1)

    def _scores(self):
        if self.tp is None:
            return 0.0, 0.0
        tp, fp, fn = self.tp, self.fp, self.fn
        if len(tp) == 2 and self.binary:
            tp, fp, fn = tp[1:], fp[1:], fn[1:]
        if self.average == "micro":
            tp, fp, fn = tp.sum(keepdims=True), fp.sum(keepdims=True), fn.sum(keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            precision = np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), 0.0)
            recall = np.where(tp + fn > 0, tp / np.maximum(tp + fn, 1), 0.0)
        return precision, recall

    binary = False


class Precision(_ConfusionMetric):
    name = "precision"

    def result(self) -> float:
        return float(np.mean(self._scores()[0]))


class Recall(_ConfusionMetric):
    name = "recall"

    def result(self) -> float:
        return float(np.mean(self._scores()[1]))


class F1(_ConfusionMetric):
    name = "f1"

    def result(self) -> float:
        p, r = self._scores()
        with np.errstate(divide="ignore", invalid="ignore"):
            f1 = np.where(p + r > 0, 2 * p * r / np.maximum(p + r, 1e-300), 0.0)
        return float(np.mean(f1))


class _MeanError(Metric):
    def reset(self) -> None:
        self.total = 0.0
        self.count = 0

    def update(self, output, target) -> None:
        out, tgt = _host(output).astype(np.float64), _host(target).astype(np.float64)
        if out.shape != tgt.shape:
            if out.size != tgt.size:
                raise FwError(f"{self.name}: outputs of shape {out.shape} and targets of shape "
                              f"{tgt.shape} do not match",
                              hint=f"{self.name} is a regression metric: use it with one output "
                              "per target (for class scores use 'accuracy')")
            out = out.reshape(tgt.shape)
        self.total += float(self._error(out - tgt).sum())
        self.count += int(tgt.size)

    def result(self) -> float:
        return self.total / max(self.count, 1)


class MAE(_MeanError):
    """Mean absolute error."""

    name = "mae"

    @staticmethod
    def _error(d):
        return np.abs(d)


class MSE(_MeanError):
    """Mean squared error."""

    name = "mse"

    @staticmethod
    def _error(d):
        return d * d


_BY_NAME = {"accuracy": Accuracy, "acc": Accuracy, "precision": Precision, "recall": Recall,
            "f1": F1, "mae": MAE, "mse": MSE, "top5_accuracy": lambda: TopKAccuracy(5),
            "top_k_accuracy": TopKAccuracy}


def get(metric) -> Metric:
    """A Metric from a name ("accuracy", "top5_accuracy", "f1", "mae", ...) or an instance."""
    if isinstance(metric, Metric):
        return metric
    if isinstance(metric, str):
        name = metric.lower()
        if name.startswith("top") and name.endswith("_accuracy") and name[3:-9].isdigit():
            return TopKAccuracy(int(name[3:-9]))
        if name in _BY_NAME:
            return _BY_NAME[name]()
    raise FwError(f"unknown metric {metric!r}",
                  hint=f"use one of {', '.join(sorted(_BY_NAME))}, 'topK_accuracy', or a Metric "
                  "instance")
