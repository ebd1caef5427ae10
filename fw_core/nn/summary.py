"""``fw.nn.summary(model, input)``: a table of a model's layers, output shapes and parameters.

It runs one forward pass under ``no_grad`` and in evaluation mode (so no dropout draws and no
batch-norm statistics change; the model's modes are restored after), with a forward hook on
every module.
"""

from __future__ import annotations

__all__ = ["summary"]

from collections.abc import Sequence

from .. import dtypes as _dt
from ..autograd import no_grad
from ..errors import FwError
from ..ops.creation import zeros
from ..tensor import Tensor
from .module import Module


def summary(model: Module, input_data=None, dtypes: Sequence | None = None, device=None,
            quiet: bool = False) -> str:
    """Print and return a table: each module's path, type, output shape and parameter count,
    then total / trainable parameters, parameter memory and the estimated activation memory.

    Args:
        model: the module to describe.
        input_data: an input shape including the batch dimension (``(1, 3, 32, 32)``), a list
            of shapes (one per forward argument), a tensor, or a list/tuple of tensors; None
            lists the modules and parameters without running forward (no output shapes).
        dtypes: one dtype per input built from a shape (default float32; use ``fw.int64`` for
            token ids).
        device: where shape-built inputs are created (default: the model's parameters').
        quiet: return the table without printing it.

    The parameter column counts each module's own parameters (not its children's), so the
    column sums to the total. The activation estimate adds the output bytes of every leaf
    module for this input: roughly what backward keeps alive in training.

    >>> fw.nn.summary(fw.nn.Sequential(fw.nn.Linear(4, 8), fw.nn.ReLU()), (2, 4))
    """
    rows: dict[str, list] = {path: [m, None] for path, m in model.named_modules()}
    if input_data is None:
        text = _table(model, rows, None, None)
        if not quiet:
            print(text)
        return text
    inputs = _make_inputs(model, input_data, dtypes, device)
    paths = {id(m): path for path, m in model.named_modules()}
    leaf_bytes = [0]

    def record(module, args, output):
        row = rows[paths[id(module)]]
        if row[1] is None:
            row[1] = _shapes(output)
        if not module._modules:
            leaf_bytes[0] += sum(t.numel() * t.element_size() for t in _tensors(output))

    handles = [module.register_forward_hook(record) for module, _ in rows.values()]
    modes = {id(m): m.training for m in model.modules()}
    try:
        model.eval()
        with no_grad():
            model(*inputs)
    finally:
        for h in handles:
            h.remove()
        for m in model.modules():
            m.__dict__["training"] = modes[id(m)]
    text = _table(model, rows, inputs, leaf_bytes[0])
    if not quiet:
        print(text)
    return text


def _make_inputs(model, input_data, dtypes, device) -> list:
    if isinstance(input_data, Tensor):
        return [input_data]
    if isinstance(input_data, (list, tuple)) and input_data and all(
            isinstance(x, Tensor) for x in input_data):
        return list(input_data)
    if isinstance(input_data, (list, tuple)) and input_data and all(
            isinstance(x, int) for x in input_data):
        shapes = [tuple(input_data)]
    elif isinstance(input_data, (list, tuple)) and input_data and all(
            isinstance(x, (list, tuple)) for x in input_data):
        shapes = [tuple(s) for s in input_data]
    else:
        raise FwError(f"summary: cannot build inputs from {input_data!r}",
                      hint="pass a shape including the batch dimension, e.g. (1, 3, 32, 32), a "
                      "list of shapes, or example tensors")
    dtypes = list(dtypes) if dtypes is not None else [_dt.float32] * len(shapes)
    if len(dtypes) != len(shapes):
        raise FwError(f"summary: {len(shapes)} input shapes but {len(dtypes)} dtypes",
                      hint="give one dtype per input")
    if device is None:
        first = next(iter(model.parameters()), None)
        device = first.device if first is not None else "cpu"
    return [zeros(*shape, dtype=dtype, device=device) for shape, dtype in zip(shapes, dtypes)]


def _tensors(output):
    if isinstance(output, Tensor):
        yield output
    elif isinstance(output, (list, tuple)):
        for item in output:
            yield from _tensors(item)
    elif isinstance(output, dict):
        for item in output.values():
            yield from _tensors(item)


def _shapes(output) -> str:
    shapes = [str(list(t.shape)) for t in _tensors(output)]
    return ", ".join(shapes) if shapes else "-"


def _table(model, rows, inputs, activation_bytes: int) -> str:
    body = []
    for path, (module, shape) in rows.items():
        depth = path.count(".") + 1 if path else 0
        name = "  " * depth + path if path else "(root)"
        own = sum(p.numel() for p in module.parameters(recurse=False))
        body.append((name, type(module).__name__, shape or ("(not run)" if inputs else "-"),
                     f"{own:,}" if own else "-"))
    header = ("Layer", "Type", "Output shape", "Params")
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(4)]

    def line(cells):
        return "  ".join(c.ljust(w) if i < 3 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    rule = "=" * len(line(tuple("x" * w for w in widths)))
    params = list(model.parameters())
    total = sum(p.numel() for p in params)
    trainable = sum(p.numel() for p in params if p.requires_grad)
    param_bytes = sum(p.numel() * p.element_size() for p in params)
    lines = [rule, line(header), rule.replace("=", "-"), *map(line, body), rule,
             f"Total params: {total:,}",
             f"Trainable params: {trainable:,}",
             f"Non-trainable params: {total - trainable:,}"]
    if inputs is not None:
        input_bytes = sum(t.numel() * t.element_size() for t in inputs)
        lines.append(f"Input size: {_size(input_bytes)}")
    lines.append(f"Parameter memory: {_size(param_bytes)}")
    if inputs is not None:
        lines.append(f"Estimated activation memory: {_size(activation_bytes)}")
    lines.append(rule)
    return "\n".join(lines)


def _size(n: int) -> str:
    """Bytes in B, KB, MB or GB (powers of 1024)."""
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} B"
