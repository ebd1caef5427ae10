"""``fw_onnx.to_edge``: an ONNX model as an fw-edge program, so fw-edge runs ONNX models on
a device that has NumPy and neither onnx nor fw.

The model is imported (:func:`fw_onnx.load`) and its inference run exported with
``fw.export``: the program is what fw would compute, checked by the exporter against fw-edge.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

import fw_core as fw

from .importer import load

#: the size each dynamic dimension (an ONNX ``dim_param``) takes in the example inputs
#: (distinct primes, so two dimensions are never mistaken for one)
_SIZES = (3, 5, 7, 11, 13, 17, 19, 23)


def to_edge(model, path, example_inputs: dict | None = None):
    """Write the ONNX ``model`` (a path or ModelProto) as the fw-edge program ``path``.

    Args:
        model: the ONNX model.
        path: the ``.fwm`` file to write.
        example_inputs: input name -> array to trace with; by default each graph input gets
            an array of its declared dtype and shape (ones for integers and bools, normal
            values for floats). Either way, every dimension the model leaves open (a
            ``dim_param``, or none) is a dynamic dimension of the program, named after it.

    Returns:
        fw.export's result: the file, its ops, and how far fw-edge is from fw on the examples.
    """
    proto = onnx.load(str(model)) if not isinstance(model, onnx.ModelProto) else model
    module = load(proto)
    examples, dynamic = _examples(proto, module.input_names)
    if example_inputs is not None:
        examples = {name: np.asarray(value) for name, value in example_inputs.items()}
    tensors = {name: fw.tensor(value) for name, value in examples.items()}
    return fw.export(module, tensors, path, dynamic_dims=dynamic or None)


def _examples(proto, names: list[str]):
    """Example arrays for the graph inputs, and their dynamic dimensions by input."""
    declared = {i.name: i for i in proto.graph.input}
    rng = np.random.default_rng(0)
    sizes: dict[str, int] = {}
    examples, dynamic = {}, {}
    for name in names:
        tensor_type = declared[name].type.tensor_type
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tensor_type.elem_type))
        shape = []
        for axis, dim in enumerate(tensor_type.shape.dim):
            if dim.HasField("dim_value"):
                shape.append(dim.dim_value)
                continue
            label = dim.dim_param or f"{name}_{axis}"
            size = sizes.setdefault(label, _SIZES[len(sizes) % len(_SIZES)])
            dynamic.setdefault(name, {})[axis] = label
            shape.append(size)
        examples[name] = rng.standard_normal(shape).astype(dtype) if dtype.kind == "f" else \
            np.ones(shape, dtype)
    return examples, dynamic
