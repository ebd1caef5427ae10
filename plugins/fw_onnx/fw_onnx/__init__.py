"""fw_onnx: fw models written as ONNX.

    import fw_onnx
    fw_onnx.export(model, (x,), "model.onnx", dynamic_axes={"x": {0: "batch"}})

The exporter writes the inference graph ``fw.export`` traces and rewrites (the one fw-edge
runs), so what runs on the edge and what goes to ONNX are the same program.
"""

from __future__ import annotations

from .export import OnnxExport, export
from .program import supported_ops, to_onnx

__all__ = ["OnnxExport", "export", "supported_ops", "to_onnx"]
