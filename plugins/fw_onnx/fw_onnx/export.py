"""``fw_onnx.export``: a model's inference run written as an ONNX file.

The run is traced and rewritten by ``fw.export`` (the same graph fw-edge runs, checked there
against fw's outputs), then each program node is written as ONNX nodes; the model is validated
by ``onnx.checker`` with full shape inference before it is saved.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import onnx

import fw_core as fw
from fw_core.errors import ExportError
from fw_core.io import safetensors_format as fmt

from .program import to_onnx


@dataclass
class OnnxExport:
    """What :func:`export` wrote: the file, its opset, the ONNX op types it uses, its size."""

    path: Path
    opset: int
    op_types: list[str]
    bytes: int

    def __str__(self) -> str:
        return (f"{self.path}: ONNX opset {self.opset}, {len(self.op_types)} op types, "
                f"{self.bytes / 2**20:.2f} MiB")


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
    with tempfile.TemporaryDirectory() as folder:
        program_path = Path(folder) / "model.fwm"
        fw.export(model_or_fn, example_inputs, program_path,
                  dynamic_dims=_dynamic_dims(dynamic_axes))
        arrays, metadata, _ = fmt.read(program_path)
    program = json.loads(metadata["__fwm_program__"])
    model = to_onnx(program, arrays, opset, name=type(model_or_fn).__name__)
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as error:
        raise ExportError(f"the ONNX model fails onnx.checker: {error}",
                          hint="report it with the model: this is a bug in fw_onnx") from None
    path = Path(path)
    onnx.save(model, path)
    return OnnxExport(path, model.opset_import[0].version,
                      sorted({node.op_type for node in model.graph.node}), path.stat().st_size)


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
