"""``fw.Model``: the Keras-style loop over any Module — compile, fit, evaluate, predict, save.

One fit loop serves every device: batches go to the device of the model's parameters, each
one copied while the previous one trains.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..autograd import no_grad
from ..errors import FwError, PluginError
from ..tensor import Tensor
from . import losses as _losses
from . import metrics as _metrics
from .callbacks import CallbackList, History
from .progress import ProgressBar

_OPTIMIZERS = {"sgd": ("SGD", {"lr": 0.01}), "adam": ("Adam", {"lr": 1e-3}),
               "adamw": ("AdamW", {"lr": 1e-3}), "rmsprop": ("RMSprop", {"lr": 1e-3}),
               "adagrad": ("Adagrad", {"lr": 1e-2})}


class Model:
    """Wraps a Module with an optimizer, a loss and metrics, and trains it.

    >>> model = fw.Sequential([fw.nn.Linear(64, 32), fw.nn.ReLU(), fw.nn.Linear(32, 10)])
    >>> model.compile(optimizer="adam", loss="cross_entropy", metrics=["accuracy"])
    >>> history = model.fit(x_train, y_train, epochs=5, batch_size=64, validation_split=0.1)
    """

    def __init__(self, module):
        from ..nn import Module

        if not isinstance(module, Module):
            raise FwError(f"Model wraps an fw.nn.Module, got {type(module).__name__}",
                          hint="build the network as an fw.nn.Module (or fw.Sequential([...]))")
        self.module = module
        self.optimizer = None
        self.loss_fn = None
        self.metrics: list[_metrics.Metric] = []
        self.stop_training = False
        self.epoch = 0
        self._loss_arg = None
        self._compile_config: dict = {}

    # -- set-up -------------------------------------------------------------------------------
    def compile(self, optimizer="adam", loss="cross_entropy", metrics=(), **optimizer_kwargs):
        """Choose the optimizer (a name like "adam", an ``fw.optim`` optimizer, or a function
        of the parameters), the loss (a name like "cross_entropy"/"mse" or a function
        ``loss(output, target)``) and metrics (names or Metric objects)."""
        from .. import optim

        loss_fn = _losses.get(loss)  # resolve names first: a failing compile changes nothing
        chosen_metrics = [_metrics.get(m) for m in metrics]
        if isinstance(optimizer, str):
            key = optimizer.lower()
            if key not in _OPTIMIZERS:
                raise FwError(f"unknown optimizer {optimizer!r}",
                              hint=f"use one of {', '.join(_OPTIMIZERS)} or an fw.optim object")
            cls_name, defaults = _OPTIMIZERS[key]
            optimizer = getattr(optim, cls_name)(self.module.parameters(),
                                                 **{**defaults, **optimizer_kwargs})
        elif callable(optimizer) and not hasattr(optimizer, "step"):
            optimizer = optimizer(self.module.parameters())
        self.optimizer = optimizer
        self.loss_fn = loss_fn
        self._loss_arg = loss  # as given (a name, a module, a function): what save() stores
        self.metrics = chosen_metrics
        self._compile_config = {"optimizer": type(optimizer).__name__,
                                "loss": loss if isinstance(loss, str) else getattr(
                                    loss, "__name__", type(loss).__name__),
                                "metrics": [m.name for m in self.metrics]}
        return self

    @property
    def device(self):
        for p in self.module.parameters():
            return p.device
        from ..device import get

        return get("cpu")

    def to(self, device) -> Model:
        self.module.to(device)
        return self

    def __call__(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def summary(self, input_shape=None) -> str:
        from ..nn import summary

        return summary(self.module, input_shape)

    def __repr__(self) -> str:
        return f"Model({self.module!r})"

    # -- data -----------------------------------------------------------------------------------
    def _loader(self, x, y, batch_size, shuffle, drop_last=False, sampler_for=None):
        """A DataLoader over ``(x, y)``, a Dataset, or the DataLoader ``x`` itself.
        ``sampler_for(dataset, shuffle)``: the sampler picking this process's samples (a
        distributed fit's shard), which then stands for ``shuffle``."""
        from ..data import DataLoader, Dataset, TensorDataset

        if hasattr(x, "__iter__") and hasattr(x, "batch_size") and y is None:
            if sampler_for is not None:
                raise FwError("fit(distributed=True) shards the data itself and cannot reshard "
                              "a DataLoader", hint="pass the Dataset (or x, y arrays) instead")
            return x  # already a loader
        if isinstance(x, Dataset) and y is None:
            dataset = x
        elif y is None:
            raise FwError("fit/evaluate needs targets: pass (x, y), a Dataset or a DataLoader",
                          hint="e.g. model.fit(x_train, y_train, epochs=3)")
        else:
            xs, ys = _as_tensor(x, "x"), _as_tensor(y, "y")
            if len(xs) != len(ys):
                raise FwError(f"x has {len(xs)} samples but y has {len(ys)}",
                              hint="pass inputs and targets with the same first dimension")
            dataset = TensorDataset(xs, ys)
        order = {"shuffle": shuffle} if sampler_for is None else \
            {"sampler": sampler_for(dataset, shuffle)}
        return DataLoader(dataset, batch_size=batch_size, drop_last=drop_last,
                          device=self._staging_device(), **order)

    def _staging_device(self):
        """The model's device when batches must travel there (the loader then copies batch
        k+1 while batch k trains), else None."""
        device = self.device
        return None if device.type == "cpu" else device

    def _to_device(self, batch):
        device = self.device
        if isinstance(batch, Tensor):
            return batch.to(device)
        if isinstance(batch, (list, tuple)):
            return type(batch)(self._to_device(b) for b in batch)
        return batch

    # -- training ----------------------------------------------------------------------------
    def fit(self, x=None, y=None, epochs: int = 1, batch_size: int = 32, validation_data=None,
            validation_split: float = 0.0, shuffle: bool = True, callbacks=(), verbose="auto",
            initial_epoch: int = 0, check_finite: bool = True, compiled: bool = True,
            debug: bool = False, distributed: bool = False) -> History:
        """Train for ``epochs`` over ``(x, y)``, a Dataset or a DataLoader; returns the History.

        As in Keras, ``epochs`` is the index of the last epoch: to continue a loaded model for
        one more epoch after two, call ``fit(..., epochs=3, initial_epoch=model.epoch)``.
        ``validation_split`` holds out the last fraction of ``(x, y)`` (before shuffling).
        ``check_finite`` rejects batches containing NaN/inf with an error naming the batch.
        ``compiled`` lets the adaptive scheduler compile the training step (forward, backward
        and optimizer update) once it repeats (see ``fw.compile``); ``compiled=False`` (or
        ``fw.scheduler.disable()``) keeps every step eager. Results are the same either way.
        ``debug=True`` runs the epochs under ``fw.context("debug")``: every step eager, with
        fw-debugger's anomaly detection naming the first op that produces a NaN/Inf.
        ``distributed=True`` (under ``mpiexec -n N`` or ``fw run -n N``, with fw-mpi installed)
        trains one replica per rank: the module under DistributedDataParallel, each rank on
        its DistributedSampler shard of the data (``batch_size`` per rank), the epoch's metrics
        averaged over the ranks, progress and file-writing callbacks on rank 0 only; a
        compiled step keeps the gradient all-reduce in its plan.
        """
        self._require_compiled("fit")
        session = _distributed_session(self, distributed)
        if debug:
            _require_debugger()
        if validation_split and validation_data is None:
            if y is None:
                raise FwError("validation_split needs array inputs (x, y)",
                              hint="pass validation_data=... for datasets and loaders")
            xs, ys = _as_tensor(x, "x"), _as_tensor(y, "y")
            cut = int(len(xs) * (1 - validation_split))
            x, y, validation_data = xs[:cut], ys[:cut], (xs[cut:], ys[cut:])
        loader = self._loader(x, y, batch_size, shuffle,
                              sampler_for=None if session is None else session.sampler)
        if session is not None:
            callbacks = session.callbacks(callbacks)
            verbose = verbose if session.main else 0
        history = History()
        progress = [ProgressBar(verbose)] if verbose not in (0, False) else []
        # the user's callbacks first, so what they add to the logs (lr) is shown and recorded
        hooks = CallbackList([*callbacks, *progress, history], self)
        self._fit_epochs = epochs
        self._fit_steps = _length(loader)
        self.stop_training = self._stop_now = False
        start = initial_epoch
        hooks.on_train_begin({})
        with _debug_context(debug):
            for epoch in range(start, epochs):
                hooks.on_epoch_begin(epoch, {})
                if session is not None:
                    session.set_epoch(epoch)
                logs = self._train_epoch(loader, hooks, check_finite, compiled)
                if session is not None:
                    logs = session.average(logs)
                if validation_data is not None:
                    logs.update({f"val_{k}": v for k, v in
                                 self.evaluate(*_split(validation_data), batch_size=batch_size,
                                               verbose=0).items()})
                self.epoch = epoch + 1
                hooks.on_epoch_end(epoch, logs)
                if self.stop_training:
                    break
        hooks.on_train_end({})
        return history

    def _train_epoch(self, loader, hooks, check_finite, compiled=True) -> dict:
        self.module.train()
        if compiled:
            train_step = self._compiled_step()
            train_step.retrace()  # each epoch traces at the same steps: resuming is exact
        else:
            train_step = self._train_step
        for m in self.metrics:
            m.reset()
        total, count = 0.0, 0
        logs: dict = {}
        for step, batch in enumerate(loader):
            hooks.on_train_batch_begin(step, logs)
            inputs, target = self._unpack(batch)
            if check_finite:
                _check_finite(inputs, step)
            loss, output = train_step(target, *inputs)
            n = len(target) if hasattr(target, "__len__") else 1
            value = loss.item()
            total += value * n
            count += n
            for m in self.metrics:
                m.update(output, target)
            logs = {"loss": total / count, **{m.name: m.result() for m in self.metrics}}
            hooks.on_train_batch_end(step, {**logs, "batch_loss": value})
            if getattr(self, "_stop_now", False):
                break
        return logs

    def _train_step(self, target, *inputs):
        """One optimisation step; returns the loss and the (detached) output for the metrics."""
        output = self.module(*inputs)
        loss = self.loss_fn(output, target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach(), output.detach()

    def _compiled_step(self):
        """The training step under fw.compile, made again when the optimizer or loss change."""
        from ..compile import compile as fw_compile

        key = (id(self.optimizer), id(self.loss_fn))
        cached = getattr(self, "_compiled", None)
        if cached is None or cached[0] != key:
            name = f"{type(self.module).__name__}.train_step"
            step = fw_compile(self._train_step, name=name)
            restored = getattr(self, "_restored_step", None)
            if restored is not None:  # what the saved model's step had learnt
                step.load_state_dict(restored)
                self._restored_step = None
            self._compiled = cached = (key, step)
        return cached[1]

    def _step_state(self) -> dict | None:
        """What the compiled training step learnt (for :meth:`save`), if it ran."""
        cached = getattr(self, "_compiled", None)
        if cached is not None and cached[0] == (id(self.optimizer), id(self.loss_fn)):
            return cached[1].state_dict()
        return getattr(self, "_restored_step", None)

    def _unpack(self, batch):
        batch = self._to_device(batch)
        if not isinstance(batch, (list, tuple)) or len(batch) < 2:
            raise FwError("each batch must be (inputs, target)",
                          hint="use a Dataset whose items are (x, y) pairs")
        *inputs, target = batch
        return inputs, target

    def evaluate(self, x=None, y=None, batch_size: int = 32, verbose=0) -> dict:
        """Loss and metrics over the data, in eval mode and without gradients."""
        self._require_compiled("evaluate")
        loader = self._loader(x, y, batch_size, shuffle=False)
        self.module.eval()
        for m in self.metrics:
            m.reset()
        total, count = 0.0, 0
        with no_grad():
            for batch in loader:
                inputs, target = self._unpack(batch)
                output = self.module(*inputs)
                n = len(target) if hasattr(target, "__len__") else 1
                total += self.loss_fn(output, target).item() * n
                count += n
                for m in self.metrics:
                    m.update(output, target)
        result = {"loss": total / max(count, 1), **{m.name: m.result() for m in self.metrics}}
        if verbose:
            print("  ".join(f"{k} {v:.4f}" for k, v in result.items()))
        return result

    def predict(self, x, batch_size: int = 256) -> Tensor:
        """The model's outputs for ``x`` (a tensor/array, Dataset or loader), concatenated."""
        from ..data import DataLoader, Dataset, TensorDataset
        from ..ops.shape import cat

        self.module.eval()
        device = self._staging_device()
        if isinstance(x, Dataset):
            loader = DataLoader(x, batch_size=batch_size, device=device)
        elif hasattr(x, "batch_size"):
            loader = x
        else:
            loader = DataLoader(TensorDataset(_as_tensor(x, "x")), batch_size=batch_size,
                                device=device)
        outputs = []
        with no_grad():
            for batch in loader:
                batch = self._to_device(batch)
                inputs = batch if isinstance(batch, (list, tuple)) else (batch,)
                if len(inputs) > 1 and not isinstance(x, Tensor | np.ndarray):
                    inputs = inputs[:-1]  # (x, y) datasets: predict from x
                outputs.append(self.module(*inputs))
        return cat(outputs, 0)

    def _require_compiled(self, what: str) -> None:
        if self.optimizer is None or self.loss_fn is None:
            raise FwError(f"call compile() before {what}()",
                          hint='e.g. model.compile(optimizer="adam", loss="cross_entropy", '
                          'metrics=["accuracy"])')

    # -- saving -------------------------------------------------------------------------------
    def save(self, directory) -> None:
        """Save the whole training state (architecture, weights, optimizer, loss, metrics,
        epoch, random state) to the folder ``directory``, atomically (docs/saving.md)."""
        from ..io import save_model

        save_model(self, directory)

    @classmethod
    def load(cls, directory, custom_objects=None) -> Model:
        """A Model restored from :meth:`save`, ready to continue training exactly.

        Classes and functions of your own that the model uses are found through
        ``@fw.serializable`` or ``custom_objects={"Name": Name}``; nothing named in the folder
        is ever imported.
        """
        from ..io import load_model

        return load_model(directory, custom_objects)


def Sequential(layers) -> Model:  # noqa: N802 - Keras' name
    """A Model from a list of layers applied in order (Keras' ``Sequential([...])``)."""
    from ..nn import Sequential as SequentialModule

    return Model(SequentialModule(*layers))


def _as_tensor(value, name: str) -> Tensor:
    if isinstance(value, Tensor):
        return value
    from ..ops.creation import as_tensor

    try:
        return as_tensor(np.asarray(value))
    except Exception as exc:
        raise FwError(f"cannot turn {name} ({type(value).__name__}) into a tensor: {exc}",
                      hint="pass NumPy arrays, fw tensors, a Dataset or a DataLoader") from exc


def _split(data):
    if isinstance(data, (tuple, list)) and len(data) == 2:
        return data
    return data, None


def _length(loader):
    try:
        return len(loader)
    except TypeError:
        return None


def _check_finite(inputs, step: int) -> None:
    for t in inputs:
        if isinstance(t, Tensor) and t.is_floating_point():
            values = np.asarray(t.__array__())
            if not np.isfinite(values).all():
                bad = int((~np.isfinite(values)).sum())
                raise FwError(
                    f"batch {step} of the training data contains {bad} NaN/inf value(s) "
                    f"(input of shape {tuple(t.shape)})",
                    hint="clean or impute the data (e.g. np.nan_to_num), or pass "
                    "check_finite=False to fit if non-finite inputs are intended",
                )


def _require_debugger() -> None:
    """fit(debug=True) needs fw-debugger's anomaly inspector; say how to get it."""
    from .. import inspectors

    if "fw_debugger.anomaly" not in inspectors.registered():
        raise PluginError("fit(debug=True) needs the fw-debugger plugin, which is not loaded",
                          hint="pip install fw-debugger (or remove fw_debugger from "
                               "FW_DISABLE_PLUGINS / add it to FW_PLUGINS), or fit without "
                               "debug=True")


def _distributed_session(model: Model, distributed: bool):
    """The distributed backend's session for one fit (None unless ``distributed``); fw_core
    finds the backend through the plugin that registered it (fw-mpi)."""
    if not distributed:
        return None
    from .. import distributed as _distributed

    backend = _distributed.backend("fit(distributed=True)")
    return _distributed.resolve(backend.fit)(model)


def _debug_context(debug: bool):
    """``fw.context("debug")`` when asked, else nothing."""
    if not debug:
        return contextlib.nullcontext()
    from ..context import context

    return context("debug")
