"""Saving and loading: ``fw.save``/``fw.load`` for state dicts and other nests of tensors,
``model.save``/``fw.Model.load`` for whole models, :func:`serializable` for classes of your own,
and :func:`stale` for what killed saves left behind. Nothing is pickled, so loading never runs
code; every write is atomic and durable; every read is verified. ``fw.load`` also reads
PyTorch's checkpoints, through a restricted unpickler that admits only tensors and plain
values (:mod:`.torch_checkpoint`)."""

from .files import load, save
from .models import load_model, save_model, stale
from .names import serializable

__all__ = ["load", "load_model", "save", "save_model", "serializable", "stale"]
