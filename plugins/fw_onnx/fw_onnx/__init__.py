"""fw_onnx: fw models written as ONNX, and ONNX models read as trainable fw modules.

    import fw_onnx
    fw_onnx.export(model, (x,), "model.onnx", dynamic_axes={"x": {0: "batch"}})
    module = fw_onnx.load("model.onnx")        # an fw.nn.Module: train, compile, debug it

The exporter writes the inference graph ``fw.export`` traces and rewrites (the one fw-edge
runs), so what runs on the edge and what goes to ONNX are the same program. The importer runs
each ONNX node as fw ops (:mod:`fw_onnx.handlers`); :mod:`fw_onnx.backend` is the same as an
``onnx.backend`` backend, which ONNX's node suite judges (:mod:`fw_onnx.node_suite`).
"""

from __future__ import annotations

from .edge import to_edge
from .export import OnnxExport, export
from .importer import OnnxModule, load
from .program import supported_ops, to_onnx

__all__ = ["OnnxExport", "OnnxModule", "export", "load", "supported_ops", "to_edge", "to_onnx"]
