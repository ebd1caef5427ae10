"""``fw_onnx.export``: a model's inference run written as an ONNX file.

The run is traced and rewritten as ``fw.export`` does (``fw_core.export.trace_program``: the
program fw-edge would run, without fw-edge's op coverage), then each program node is written as
ONNX nodes. Before the model is saved it passes ``onnx.checker`` with full shape inference, and
onnx's own reference evaluator, run on the example inputs, must give fw's outputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from fw_core.errors import ExportError
from fw_core.export import AGREEMENT, agreement, peak, trace_program

from .program import to_onnx


@dataclass
class OnnxExport:
    """What :func:`export` wrote: the file, its opset, the ONNX op types it uses, its size,
    and the largest difference between fw's outputs and onnx.reference's on the examples
    (None where onnx.reference cannot run the model)."""

    path: Path
    opset: int
    op_types: list[str]
    bytes: int
    max_abs_error: float | None

    def __str__(self) -> str:
        check = "not run (onnx.reference lacks a node)" if self.max_abs_error is None else \
            f"max abs error {self.max_abs_error:.2e}"
        return (f"{self.path}: ONNX opset {self.opset}, {len(self.op_types)} op types, "
                f"{self.bytes / 2**20:.2f} MiB; vs fw on the example inputs (onnx.reference): "
                f"{check}")


def export(model_or_fn, example_inputs, path, *, opset: int | None = None,
           dynamic_axes: dict | None = None) -> OnnxExport:
    """Write ``model_or_fn``'s inference run on ``example_inputs`` to ``path`` as ONNX.

    Args:
        model_or_fn: an ``fw.nn.Module`` (run in eval mode) or a function of tensors.
        example_inputs: a tensor, a tuple of tensors (named after the forward's parameters) or
            a dict of them by name.
        path: the ``.onnx`` file to write.
        opset: the ONNX opset (default :data:`fw_onnx.program.DEFAULT_OPSET`).
        dynamic_axes: input name -> ``{axis: dim_name}`` (or a list of axes, named
            ``<input>_<axis>``), as ``torch.onnx.export`` takes it: those sizes may change.

    Raises:
        ExportError: the run cannot be exported (what ``fw.export`` refuses, or an op with no
            ONNX form here), naming the op, its module path and what to do.
    """
    traced = trace_program(model_or_fn, example_inputs, dynamic_dims=_dynamic_dims(dynamic_axes))
    model = to_onnx(traced.program, traced.arrays, opset, name=type(model_or_fn).__name__)
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as error:
        raise ExportError(f"the ONNX model fails onnx.checker: {error}",
                          hint="report it with the model: this is a bug in fw_onnx") from None
    error = _agreement(model, traced)
    if error is not None and error > AGREEMENT * peak(traced.reference):
        raise ExportError(f"the ONNX model's outputs differ from fw's by {error:.3g} on the "
                          "example inputs (run by onnx.reference)",
                          hint="report it with the model: this is a bug in fw_onnx")
    path = Path(path)
    onnx.save(model, path)
    return OnnxExport(path, model.opset_import[0].version,
                      sorted({node.op_type for node in model.graph.node}), path.stat().st_size,
                      error)


def _agreement(model: onnx.ModelProto, traced) -> float | None:
    """How far onnx's own reference evaluator, run on the example inputs, is from fw; None
    where the evaluator cannot run the model (it lacks some of ONNX, e.g. an RNN with Relu)."""
    from onnx.reference import ReferenceEvaluator

    feeds = dict(zip(traced.signature.names, traced.signature.arrays))
    try:
        with np.errstate(all="ignore"):
            outputs = ReferenceEvaluator(model).run(None, feeds)
    except (RuntimeError, NotImplementedError) as error:
        if "Unknown" not in str(error) and not isinstance(error, NotImplementedError):
            raise
        return None
    return agreement(outputs, traced.reference)[0]


def _dynamic_dims(dynamic_axes: dict | None) -> dict | None:
    """torch's ``dynamic_axes`` in fw.export's form: lists of axes get names of their own."""
    if dynamic_axes is None:
        return None
    dims = {}
    for name, axes in dynamic_axes.items():
        if isinstance(axes, dict):
            dims[name] = dict(axes)
        elif all(isinstance(a, int) for a in axes):
            dims[name] = {a: f"{name}_{a}" for a in axes}
        else:
            raise ExportError(f"dynamic_axes[{name!r}] is {axes!r}",
                              hint='give {axis: "dim_name"} or a list of axes')
    return dims
