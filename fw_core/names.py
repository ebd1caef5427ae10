"""What a missing name says: a PyTorch name fw spells differently names fw's equivalent, any
other name says fw does not have it yet.

A module of fw's public API (``fw``, ``fw.nn``, ``fw.nn.functional``, ``fw.optim``) and
``Tensor`` raise :func:`missing` for a name they lack, through their ``__getattr__``, which
Python calls only after the normal look-up failed: present names cost nothing more.
"""

from __future__ import annotations

import sys

from .errors import MissingNameError

#: "owner.name" as PyTorch code writes it (owner: fw, nn, nn.functional, optim, Tensor) ->
#: what to write in fw instead, where fw has it under another name or in another form
EQUIVALENTS: dict[str, str] = {
    "fw.Size": "a tuple of ints (fw's shapes are plain tuples: t.shape == (2, 3))",
    "fw.jit": "fw.compile(fn_or_module) or @fw.traceable",
    "fw.onnx": "the fw_onnx plugin (pip install fw-onnx)",
    "fw.dtype": "fw.DType (fw.float32 is a DType)",
    "fw.is_tensor": "isinstance(x, fw.Tensor)",
    "fw.numel": "t.numel()",
    "fw.export": "fw.compile(...) then the exporter of the plugin you target (fw_onnx)",
    "optim.SparseAdam": "fw.optim.Adam: fw has no sparse gradients (nn.Embedding(sparse=False) "
                        "gives its weight a dense one)",
    "nn.DataParallel": "the fw_mpi plugin (data-parallel training over MPI ranks)",
    "nn.parallel": "the fw_mpi plugin (data-parallel training over MPI ranks)",
    "Tensor.is_cuda": "t.device.type == 'cuda'",
    "Tensor.get_device": "t.device.index",
    "Tensor.data_ptr": "t.numpy() to reach the array (fw does not expose raw pointers)",
    "Tensor.storage": "t.numpy() (fw tensors own their array; there is no storage object)",
    "Tensor.untyped_storage": "t.numpy() (fw tensors own their array; there is no storage "
                              "object)",
    "Tensor.ndimension": "t.dim()",
    "Tensor.nelement": "t.numel()",
    "Tensor.pin_memory": "nothing: fw's DataLoader stages host-to-device copies itself",
    "Tensor.is_pinned": "nothing: fw's DataLoader stages host-to-device copies itself",
}


def missing(owner: str, name: str) -> MissingNameError:
    """The error for ``owner.name`` (owner as in :data:`EQUIVALENTS`: "fw", "nn", "Tensor")."""
    qualified = f"{owner}.{name}"
    equivalent = EQUIVALENTS.get(qualified)
    if equivalent is None:
        return MissingNameError(f"fw has no {qualified} yet",
                                hint="no fw equivalent exists yet")
    return MissingNameError(f"fw has no {qualified}", hint=f"use {equivalent}")


def guard(module_name: str, owner: str) -> None:
    """Give module ``module_name`` a ``__getattr__`` raising :func:`missing` for what it lacks
    (``owner`` is how the error names it), unless it defines its own."""
    module = sys.modules[module_name]
    if "__getattr__" in vars(module):
        return

    def __getattr__(name: str):
        if name.startswith("__"):  # import machinery and tools probing dunders (__path__, ...)
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        raise missing(owner, name)

    module.__getattr__ = __getattr__
