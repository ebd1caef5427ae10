"""``fw.export``: a model's inference run written as one ``.fwm`` program that fw-edge runs on
NumPy alone (the format: docs/fwm_format.md).

The run is traced with the compile machinery (eval mode, no grad), once at the example sizes and
once more per dynamic dimension, so sizes that follow the inputs become size expressions. The
graph is then rewritten for inference (:mod:`.rewrite`), written with its weights and a checksum
over the whole file (the integrity rules of ``fw.save``; never a pickle), checked against the
ops the installed fw-edge runs (an op it cannot run is refused here, never on the device), and
finally loaded into fw-edge and run on the example inputs: the result says how far the program's
outputs are from fw's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ExportError
from ..io import safetensors_format as fmt
from ..io.atomic import write_file
from .program import ProgramWriter
from .rewrite import prepare
from .signature import Signature, flat_outputs, output_names
from .sizes import fit_graph

__all__ = ["ExportResult", "TracedProgram", "agreement", "export", "peak", "trace_program"]

FORMAT_KEY = "__fwm_format__"
PROGRAM_KEY = "__fwm_program__"
#: how far fp32 program outputs may be from fw's before the export is refused as a bug
AGREEMENT = 1e-4


@dataclass
class ExportResult:
    """What :func:`export` wrote and how well the program reproduces fw on the example inputs.

    Attributes:
        path: the ``.fwm`` file.
        ops: the op names the program uses (what a packed runtime needs).
        bytes: the file's size.
        max_abs_error: the largest absolute difference between fw-edge's outputs and fw's.
        cosine: the smallest cosine similarity between an output of fw-edge and fw's
            (flattened per example row), 1.0 for identical outputs.
        quantized: the weights stored as int8.
        log: the rewrites made, one line each.
    """

    path: Path
    ops: list[str]
    bytes: int
    max_abs_error: float
    cosine: float
    quantized: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        kind = f"int8 weights ({len(self.quantized)})" if self.quantized else "float weights"
        return (f"{self.path}: {self.bytes / 2**20:.2f} MiB, {len(self.ops)} ops, {kind}; "
                f"vs fw on the example inputs: max abs error {self.max_abs_error:.2e}, "
                f"cosine {self.cosine:.6f}")


def export(model_or_fn, example_inputs, path, *, dynamic_dims: dict | None = None,
           quantize: str | None = None) -> ExportResult:
    """Write ``model_or_fn``'s inference run on ``example_inputs`` to ``path`` as a program.

    Args:
        model_or_fn: an ``fw.nn.Module`` (run in eval mode) or a function of tensors.
        example_inputs: a tensor, a tuple of tensors (passed by position and named after the
            forward's parameters) or a dict (passed by name).
        path: where the ``.fwm`` file goes (written atomically).
        dynamic_dims: input name -> ``{axis: dim_name}``: the sizes that may change between
            calls (``{"input_ids": {0: "batch", 1: "sequence"}}``); every other size is fixed.
        quantize: ``"int8"`` stores linear, convolution and embedding weights as int8 with one
            scale per output channel; the result reports the accuracy change.

    Raises:
        ExportError: the run cannot be a program (host reads, random numbers, sizes that a
            size expression cannot describe, ops fw-edge does not run), naming the op, its
            module path and what to do.
    """
    traced = trace_program(model_or_fn, example_inputs, dynamic_dims=dynamic_dims,
                           quantize=quantize)
    program = traced.program
    _check_coverage(program)
    path = Path(path)
    metadata = {FORMAT_KEY: str(program["version"]), PROGRAM_KEY: json.dumps(program)}
    write_file(path, lambda file: fmt.write(file, traced.arrays, metadata))
    error, cosine = _agreement(path, traced.signature, traced.reference)
    if quantize is None and error > AGREEMENT * peak(traced.reference):
        raise ExportError(f"the written program's outputs differ from fw's by {error:.3g} on the "
                          "example inputs", hint="report it with the model: this is a bug in "
                          "fw.export or fw-edge")
    return ExportResult(path, program["ops"], path.stat().st_size, error, cosine,
                        traced.quantized, traced.log)


@dataclass
class TracedProgram:
    """An inference run as a program (docs/fwm_format.md) before it is written anywhere: the
    program, the arrays its weights name, the input signature (with the example arrays) and
    fw's own outputs on the examples (flattened), for a writer of another format to check
    itself against."""

    program: dict
    arrays: dict
    signature: Signature
    reference: list
    quantized: list[str]
    log: list[str]


def trace_program(model_or_fn, example_inputs, *, dynamic_dims: dict | None = None,
                  quantize: str | None = None) -> TracedProgram:
    """What :func:`export` writes, as a :class:`TracedProgram` (arguments and errors as
    :func:`export`'s, except that no runtime's op coverage is checked)."""
    if quantize not in (None, "int8"):
        raise ExportError(f"quantize={quantize!r} is not a quantization fw.export knows",
                          hint='use quantize="int8" or leave it out')
    fn, module = _callable(model_or_fn)
    signature = Signature(fn, example_inputs, dynamic_dims)
    tensor_names = {} if module is None else {
        id(t): name for name, t in [*module.named_parameters(), *module.named_buffers()]}
    with _inference(module):
        base, reference = _trace(fn, signature, signature.sizes)  # the traced run is eager
        names_out = output_names(reference)
        moved = {d: _trace(fn, signature, {**signature.sizes, d: n + 1})[0]
                 for d, n in signature.sizes.items()}
        together = _trace(fn, signature, {d: n + 1 for d, n in signature.sizes.items()})[0] \
            if len(signature.sizes) > 1 else None
    attrs_of, shapes, fills = fit_graph(base, moved, together, signature.sizes)
    names = prepare(base, set(attrs_of), tensor_names, fills, shapes)
    writer = ProgramWriter(names, shapes, quantize)
    program = writer.program(base, signature, names_out, attrs_of, signature.sizes)
    return TracedProgram(program, writer.arrays, signature, flat_outputs(reference),
                         writer.quantized, [line for line in base.log if "export" in line])


def _callable(model_or_fn):
    from ..nn.module import Module

    if isinstance(model_or_fn, Module):
        return model_or_fn, model_or_fn
    if callable(model_or_fn):
        return model_or_fn, None
    raise ExportError(f"fw.export takes a module or a function, got {type(model_or_fn).__name__}",
                      hint="pass the model (an fw.nn.Module) or a function of tensors")


class _inference:
    """No grad, and the module (with every submodule) in eval mode for the duration."""

    def __init__(self, module):
        self.module = module

    def __enter__(self):
        from ..autograd import no_grad

        self.modes = [] if self.module is None else \
            [(m, m.training) for m in self.module.modules()]
        if self.module is not None:
            self.module.eval()
        self.no_grad = no_grad()
        self.no_grad.__enter__()

    def __exit__(self, *exc):
        self.no_grad.__exit__(*exc)
        for m, training in self.modes:
            m.training = training


def _trace(fn, signature: Signature, sizes: dict):
    """The graph of one run at ``sizes`` (op nodes only: host work and breaks are refused) and
    the run's result."""
    from ..compile.ir import Node
    from ..compile.trace import trace

    tensors = signature.tensors(sizes)
    tracer, result = trace(lambda *a: signature.call(fn, list(a)), tuple(tensors))
    if tracer.breaks:
        raise ExportError("the run cannot be written as a program: " + "; ".join(tracer.breaks),
                          hint="keep the forward free of host reads and in-place writes")
    for step in tracer.graph.steps:
        if step.__class__ is not Node:
            raise ExportError(f"the run does host work ({step.what}), which a program cannot "
                              "repeat", hint="export an inference run: model.eval(), no "
                              "optimizer step or gradient")
    return tracer.graph, result


def _check_coverage(program: dict) -> None:
    try:
        import fw_edge
    except ImportError:
        raise ExportError("fw-edge is not installed, so the program cannot be checked against "
                          "the runtime that runs it", hint="pip install fw-edge") from None
    missing = sorted(set(program["ops"]) - set(fw_edge.supported_ops()))
    if missing:
        where = {op: sorted({n["module"] or "<top level>" for n in program["nodes"]
                             if n["op"] == op}) for op in missing}
        listed = "; ".join(f"{op} (at {', '.join(w)})" for op, w in where.items())
        raise ExportError(
            f"fw-edge cannot run {listed}", op=missing[0], module=where[missing[0]][0],
            hint="rewrite that part with ops fw-edge runs (fw_edge.supported_ops()), or install "
                 "a kernel provider for them (the fw_edge.kernels entry-point group)")


def _agreement(path: Path, signature: Signature, reference: list) -> tuple[float, float]:
    """The largest absolute difference and the smallest row cosine between the program's
    outputs on the example inputs and fw's."""
    import fw_edge

    program = fw_edge.load(path)
    outputs = program(**dict(zip(signature.names, signature.arrays)))
    outputs = list(outputs.values()) if isinstance(outputs, dict) else \
        list(outputs) if isinstance(outputs, tuple) else [outputs]
    return agreement(outputs, reference)


def agreement(outputs: list, reference: list) -> tuple[float, float]:
    """The largest absolute difference and the smallest row cosine between arrays another
    runtime computed on the example inputs and fw's own outputs there (``reference``)."""
    error, cosine = 0.0, 1.0
    for got, want in zip(outputs, reference):
        want = want.numpy()
        if want.size == 0:
            continue
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        error = max(error, float(np.nanmax(diff)))
        if want.dtype.kind == "f":
            a = got.reshape(want.shape[0] if want.ndim else 1, -1).astype(np.float64)
            b = want.reshape(a.shape).astype(np.float64)
            norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
            rows = np.where(norms > 0, (a * b).sum(axis=1) / np.where(norms > 0, norms, 1), 1.0)
            cosine = min(cosine, float(rows.min()))
    return error, cosine


def peak(reference: list) -> float:
    """The largest magnitude among fw's outputs (flattened), at least 1: the scale an
    agreement tolerance is relative to."""
    return max([1.0] + [float(np.abs(t.numpy()).max()) for t in reference if t.numel()])
