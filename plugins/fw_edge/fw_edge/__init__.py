"""fw-edge: run fw programs (``.fwm`` files written by ``fw.export``) for inference, on NumPy
alone. The file format is the whole contract with fw (docs/fwm_format.md); fw-edge never
imports fw-core.

    import numpy as np, fw_edge
    prog = fw_edge.load("model.fwm")
    prog.inputs                      # (Port(name='x', dtype=float32, shape=('batch', 16)),)
    y = prog(np.ones((2, 16), np.float32))

Only the kernel modules a program's ops need are imported (``fw_edge.kernels.<family>``), and
``python -m fw_edge.pack model.fwm --out DIR`` writes a folder holding the runtime, those
modules and the model, which runs with ``sys.path.insert(0, DIR); import fw_edge``.

Kernel providers
----------------
A distribution adds or replaces kernels by declaring, in the entry-point group
``fw_edge.kernels``, a module with a ``KERNELS`` list of :class:`fw_edge.kernel_api.Kernel`
records ``(op, factory, priority=0, guard=None)``; the contract of a factory and its steps is
:mod:`fw_edge.kernel_api`. For each node fw-edge tries the records of its op, highest priority
first (its own kernels have priority 0), and the first whose guard accepts the node's spec
builds the step. ``supported_ops()`` and every load import each provider module once, so a
provider should import heavy libraries inside its factories. ``load(path, providers=False)``
runs fw-edge's own kernels only; a provider that fails to import is skipped with a warning.
"""

from __future__ import annotations

from .errors import EdgeError

__version__ = "0.1.0"
__all__ = ["EdgeError", "Program", "load", "supported_ops"]


def load(path, providers: bool = True):
    """The program of the ``.fwm`` file at ``path``, ready to call (a :class:`Program`).

    Maps and checks the file (checksum, format version, byte ranges, the tensors the program
    names), dequantizes int8 weights, and imports the kernel modules its ops need. The weights
    stay in the mapped file (read-only arrays), so the file must not be rewritten in place
    while the program is in use.

    Raises:
        EdgeError: the file is unreadable, damaged ("refused by its checksum"), of an unknown
            format version, or uses an op no kernel here (or in a provider) runs; the message
            names the op and the module path of the node that uses it.
    """
    from . import fwm_file, program_spec, registry
    from .program import Program

    contents = fwm_file.read(path)
    spec = program_spec.decode(contents.program, contents.tensors, path)
    contents.drop_pages()
    ops = {node.op for node in spec.nodes}
    table = registry.kernels_for(ops, providers)
    for node in spec.nodes:
        if not table[node.op]:
            raise registry.no_kernel(node.op, node.where, path)
    return Program(spec, table, path)


def supported_ops(providers: bool = True) -> frozenset[str]:
    """The op names this runtime and its installed providers can run (fw's exporter checks a
    program against it). Cheap: it reads fw-edge's static op table and the providers' records,
    importing no kernel module of fw-edge's own."""
    from .registry import supported_ops as ops

    return ops(providers)


def __getattr__(name: str):
    if name == "Program":  # imported on first use, keeping ``import fw_edge`` light
        from .program import Program

        return Program
    raise AttributeError(f"module 'fw_edge' has no attribute {name!r}")
