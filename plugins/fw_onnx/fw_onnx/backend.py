"""fw as an ONNX backend (``onnx.backend.base.Backend``), so ONNX's own node test suite runs
against fw: ``onnx.backend.test.BackendTest(fw_onnx.backend.FwBackend, __name__)``."""

from __future__ import annotations

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep

import fw_core as fw

from .importer import OnnxModule


class FwRep(BackendRep):
    """A prepared model: an :class:`OnnxModule` run under ``fw.no_grad``."""

    def __init__(self, module: OnnxModule):
        self.module = module

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            args, named = (), inputs
        else:
            args, named = tuple(inputs), {}
        with fw.no_grad():
            out = self.module(*args, **named)
        outs = out if isinstance(out, tuple) else (out,)
        return tuple(np.asarray(o.detach().numpy()) for o in outs)


class FwBackend(Backend):
    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs) -> FwRep:
        super().prepare(model, device, **kwargs)
        return FwRep(OnnxModule(model))

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"


prepare = FwBackend.prepare
run_model = FwBackend.run_model
run_node = FwBackend.run_node
supports_device = FwBackend.supports_device
