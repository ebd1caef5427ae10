"""Devices: the registry plugins fill, and the interned Device objects tensors carry."""

from __future__ import annotations

from .errors import DeviceError
from .kernel_chain import compose
from .records import DeviceSpec


class Device:
    """A device a tensor lives on: a type ("cpu", "cuda") and an index.

    Devices are interned, so ``a.device is b.device`` is the per-op same-device check.
    Compares equal to its string form: ``t.device == "cpu"``.
    """

    __slots__ = ("type", "index", "spec", "xp", "array_type", "kernels", "_str")

    def __init__(self, spec: DeviceSpec, index: int):
        self.type = spec.name
        #: the frozen dispatch table of this device type: op -> kernel (built per plugin load)
        self.kernels = registry.kernels.get(spec.name, _NO_KERNELS)
        self.index = index
        self.spec = spec
        self.xp, self.array_type = (spec.xp, spec.array_type) if spec.namespace is None \
            else spec.namespace()
        self._str = spec.name if index == 0 and spec.name == "cpu" else f"{spec.name}:{index}"

    def __repr__(self) -> str:
        return f"device({self._str!r})"

    def __str__(self) -> str:
        return self._str

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            return other in (self._str, self.type) if self.index == 0 else other == self._str
        return self is other

    def __hash__(self) -> int:
        return hash(self._str)

    def __reduce__(self):
        return (get, (self._str,))


_NO_KERNELS: dict = {}


class _Registry:
    """Device specs by type, filled by the plugin manager, plus the interned Device objects and
    each device type's dispatch table.

    Whether a device type is usable is asked of its spec once per load, when first needed (a
    probe may import a driver library: CuPy for ``cuda``). A table holding LazyKernels is
    composed when the first device of its type is made; until then its entries only name the
    kernels (``fw plugins``, the dispatch table).
    """

    def __init__(self):
        self.specs: dict[str, DeviceSpec] = {}
        #: device type -> {op: kernel}: built once per plugin load, never written after (but
        #: for the lazy kernels of a type, filled in once when its first device is made)
        self.kernels: dict[str, dict] = {}
        self.owners: dict[str, str] = {}
        self.blocked_hint: dict[str, str] = {}
        self._lazy: dict[str, dict] = {}  # device type -> {op: the chain to compose}
        self._reasons: dict[str, str | None] = {}  # device type -> why unusable; None: usable
        self._interned: dict = {}

    def reset(self, specs: dict[str, DeviceSpec], owners: dict[str, str],
              kernels: dict[str, dict], lazy: dict[str, dict]) -> None:
        self.specs, self.owners = specs, owners
        self.kernels, self._lazy, self._reasons = kernels, lazy, {}
        # a device whose spec survives a reload keeps its Device object, so tensors made before
        # fw.plugins.use()/register() still pass the per-op `a.device is b.device` check
        self._interned = {key: device for key, device in self._interned.items()
                          if specs.get(device.type) is device.spec
                          and self.unavailable_reason(device.type) is None}
        for device in self._interned.values():
            self._compose(device.type)
            device.kernels = kernels.get(device.type, _NO_KERNELS)

    def unavailable_reason(self, kind: str) -> str | None:
        """Why the loaded device type ``kind`` is unusable here, or None when it is usable."""
        try:
            return self._reasons[kind]
        except KeyError:
            pass
        try:
            reason = self.specs[kind].unavailable_reason()
        except Exception as exc:  # a failing probe is the reason, not a crash
            reason = f"{type(exc).__name__}: {exc}"
        self._reasons[kind] = reason
        return reason

    def unimported(self, kind: str, op):
        """What ``kind``'s table holds for a lazy ``op`` until its first device is made: a
        kernel that composes the table, then runs what it now holds (never called in practice:
        no array of ``kind`` exists before its first device)."""

        def kernel(*arrays, **attrs):
            self._compose(kind)
            return self.kernels[kind][op](*arrays, **attrs)

        return kernel

    def _compose(self, kind: str) -> None:
        """Put the kernels of ``kind``'s LazyKernels in its table (importing them), once."""
        chains = self._lazy.pop(kind, None)
        if chains:
            self.kernels[kind].update({op: compose(chain) for op, chain in chains.items()})


registry = _Registry()


def get(spec) -> Device:
    """The Device for ``"cpu"``, ``"cuda"``, ``"cuda:1"`` or a Device.

    Raises:
        DeviceError: the type is not provided by any loaded plugin, or its plugin reports it
            unusable here (the reason and a fix are in the message).
    """
    if isinstance(spec, Device):
        return spec
    try:
        return registry._interned[spec]
    except (KeyError, TypeError):
        pass
    if not isinstance(spec, str):
        raise DeviceError(f"expected a device name like 'cpu' or 'cuda:0', got {spec!r}")
    kind, _, index_text = spec.partition(":")
    if kind not in registry.specs:
        known = ", ".join(sorted(registry.specs)) or "none"
        hint = registry.blocked_hint.get(kind) or (
            f"install a plugin that provides it (e.g. pip install fw-{kind}); loaded devices: "
            f"{known}"
        )
        raise DeviceError(f"no device type {kind!r} is available", hint=hint)
    reason = registry.unavailable_reason(kind)
    if reason is not None:
        raise DeviceError(
            f"device {spec!r} is installed (plugin {registry.owners[kind]}) but unusable: "
            f"{reason}",
            hint="run on 'cpu', or fix the driver/device named above; `fw plugins` shows the state",
        )
    device_spec = registry.specs[kind]
    try:
        index = int(index_text) if index_text else 0
    except ValueError:
        raise DeviceError(f"bad device index in {spec!r}", hint="write e.g. 'cuda:0'") from None
    if index >= device_spec.count():
        raise DeviceError(
            f"device {spec!r} does not exist: {device_spec.count()} {kind} device(s) present",
            hint=f"use an index below {device_spec.count()}",
        )
    registry._compose(kind)
    device = Device(device_spec, index)
    registry._interned[spec] = device
    registry._interned[str(device)] = device
    return device


def set_current(kind: str, index: int) -> Device:
    """Make the bare type name (``"cuda"``) mean device ``index`` of that type from now on, as
    ``torch.cuda.set_device`` does, until a plugin reload replaces the type's devices.

    Raises:
        DeviceError: as :func:`get` for ``"kind:index"``.
    """
    device = get(f"{kind}:{index}")
    registry._interned[kind] = device
    return device


def available() -> list[str]:
    """Device types of loaded plugins that are usable here ("cpu", and "cuda" with a GPU)."""
    return [name for name in registry.specs if registry.unavailable_reason(name) is None]
