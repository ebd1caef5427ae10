"""Which kernels run which op: a static table of fw-edge's own kernel modules (read without
importing them) and the providers installed under the entry-point group ``fw_edge.kernels``."""

from __future__ import annotations

import importlib
import warnings

from .errors import EdgeError

#: op name -> the module of ``fw_edge.kernels`` that holds its built-in kernel
FAMILIES: dict[str, str] = {
    "pointwise": "pointwise",
    **dict.fromkeys(("linear", "matmul", "bmm"), "linalg"),
    **dict.fromkeys(("conv1d", "conv2d"), "conv"),
    **dict.fromkeys(("max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d",
                     "adaptive_avg_pool1d", "adaptive_avg_pool2d"), "pool"),
    **dict.fromkeys(("layer_norm", "rms_norm", "group_norm", "batch_norm"), "norm"),
    **dict.fromkeys(("softmax", "log_softmax", "safe_softmax"), "softmax"),
    "scaled_dot_product_attention": "attention",
    **dict.fromkeys(("reshape", "permute", "getitem", "broadcast_to", "cat", "stack", "flip",
                     "pad"), "shape"),
    **dict.fromkeys(("sum", "mean", "amax", "amin", "max", "min", "prod", "var", "std",
                     "argmax", "argmin", "norm"), "reduction"),
    **dict.fromkeys(("zeros", "ones", "full", "arange"), "creation"),
    "embedding": "embedding",
    **dict.fromkeys(("lstm_layer", "gru_layer", "rnn_layer"), "rnn"),
}

#: kernel module -> the helper modules of ``fw_edge.kernels`` it imports (for ``pack``)
HELPERS: dict[str, tuple[str, ...]] = {
    "pointwise": ("blocks", "erf", "gelu"), "conv": ("windows",), "pool": ("windows",),
    "attention": ("softmax",),
}

ENTRY_POINT_GROUP = "fw_edge.kernels"
_providers: list | None = None


def modules_for(ops) -> list[str]:
    """The kernel modules (helpers included) that the built-in kernels of ``ops`` need."""
    needed = {FAMILIES[op] for op in ops if op in FAMILIES}
    for module in list(needed):
        needed.update(HELPERS.get(module, ()))
    return sorted(needed)


def providers() -> list:
    """``(name, KERNELS)`` of each installed provider module, loaded once. A provider that
    fails to import is skipped with a warning naming it."""
    global _providers
    if _providers is None:
        from importlib.metadata import entry_points

        _providers = []
        for point in entry_points(group=ENTRY_POINT_GROUP):
            try:
                kernels = list(point.load().KERNELS)
            except Exception as exc:  # a broken provider must not stop every program
                warnings.warn(f"fw-edge skips kernel provider {point.name!r} ({point.value}): "
                              f"{type(exc).__name__}: {exc}", stacklevel=2)
                continue
            _providers.append((point.name, kernels))
    return _providers


def supported_ops(use_providers: bool = True) -> frozenset[str]:
    """The op names fw-edge can run: its own table, plus the ops providers declare."""
    ops = set(FAMILIES)
    if use_providers:
        for _, kernels in providers():
            ops.update(k.op for k in kernels)
    return frozenset(ops)


def kernels_for(ops, use_providers: bool) -> dict[str, list]:
    """For each op of ``ops`` its kernel records, best priority first, importing only the
    built-in modules these ops need.

    Raises:
        EdgeError: an op has no kernel here or in any provider.
    """
    table: dict[str, list] = {op: [] for op in ops}
    for module in {FAMILIES[op] for op in ops if op in FAMILIES}:
        for record in importlib.import_module(f"{__package__}.kernels.{module}").KERNELS:
            if record.op in table:
                table[record.op].append(record)
    if use_providers:
        for _, kernels in providers():
            for record in kernels:
                if record.op in table:
                    table[record.op].append(record)
    for records in table.values():
        records.sort(key=lambda r: -r.priority)
    return table


def no_kernel(op: str, where: str, path) -> EdgeError:
    """The error for a node whose op nothing here runs."""
    return EdgeError(f"{path}: {where} uses op {op!r}, which fw-edge cannot run (it runs "
                     f"{len(FAMILIES)} ops: see fw_edge.supported_ops()); install a kernel "
                     f"provider for it (entry-point group {ENTRY_POINT_GROUP!r}) or export the "
                     "model without it")
