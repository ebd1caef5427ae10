"""Op contracts by name: the ones fw_core declares, and the live table plugins extend."""

from __future__ import annotations

from collections.abc import Callable

from ..records import Anchor, OpDef, Reduction, Structure, TensorSpec

#: contracts fw_core itself declares; registered through the ``fw_register_ops`` hook like any
#: plugin's (see :mod:`fw_core.builtin`)
BUILTIN: dict[str, OpDef] = {}
#: every op known after loading plugins: name -> contract (filled by the plugin manager)
OPS: dict[str, OpDef] = {}
#: the values of OpDef.promotion and OpDef.cost
PROMOTIONS = ("none", "binary")
COSTS = ("normal", "cheap")


def define_op(name: str, *, family: str, doc: str, signature: str,
              meta: Callable[..., TensorSpec], vjp: Callable | None, structure: Structure,
              anchor: Anchor, saves: tuple[str, ...] = (), twice_differentiable: bool = True,
              float_result: bool = False, promotion: str = "none", effects: tuple[int, ...] = (),
              cost: str = "normal", reduction: Reduction | None = None,
              batched_sum: Callable | None = None, expr: Callable | None = None,
              builtin: bool = False) -> OpDef:
    """Build an op contract (see :class:`~fw_core.records.OpDef` for the fields).

    Plugins return the result from ``fw_register_ops`` and call it with
    :func:`fw_core.ops.dispatch.apply`. ``builtin=True`` is for fw_core's own families.
    """
    unknown = set(saves) - {"inputs", "out"}
    if unknown:
        raise ValueError(f"op {name}: saves may only name 'inputs' and 'out', got {unknown}")
    for field, value, allowed in (("promotion", promotion, PROMOTIONS), ("cost", cost, COSTS)):
        if value not in allowed:
            raise ValueError(f"op {name}: {field} must be one of {allowed}, got {value!r}")
    if not all(isinstance(i, int) and i >= 0 for i in effects):
        raise ValueError(f"op {name}: effects are input positions (ints >= 0), got {effects!r}")
    op = OpDef(name=name, family=family, doc=doc, signature=signature, meta=meta, vjp=vjp,
               structure=structure, anchor=anchor, saves=frozenset(saves),
               twice_differentiable=twice_differentiable and vjp is not None,
               float_result=float_result, promotion=promotion, effects=frozenset(effects),
               cost=cost, reduction=reduction, batched_sum=batched_sum, expr=expr)
    if builtin:
        if name in BUILTIN:
            raise ValueError(f"op {name} is declared twice in fw_core")
        BUILTIN[name] = op
    return op


def kernel(op: OpDef | str, device: str = "cpu") -> Callable | None:
    """The kernel that runs ``op`` on device type ``device`` (None: no plugin has one), as the
    last plugin load froze it: guarded kernels already chained to what serves the rest."""
    from ..device import registry

    return registry.kernels.get(device, {}).get(get(op) if isinstance(op, str) else op)


def devices_with_kernel(op: OpDef) -> list[str]:
    """The device types that have a kernel for ``op``."""
    from ..device import registry

    return sorted(device for device, table in registry.kernels.items() if op in table)


def get(name: str) -> OpDef:
    """The contract of op ``name`` (a KeyError lists close names)."""
    try:
        return OPS[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name, OPS, n=3)
        raise KeyError(f"no op named {name!r}" + (f"; did you mean {close}?" if close else ""))\
            from None
