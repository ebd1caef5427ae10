"""Devices: the registry plugins fill, and the interned Device objects tensors carry."""

from __future__ import annotations

from .errors import DeviceError
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
        self.xp = spec.xp
        self.array_type = spec.array_type
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
    each device type's dispatch table."""

    def __init__(self):
        self.specs: dict[str, DeviceSpec] = {}
        #: device type -> {op: kernel}: built once per plugin load, never written after
        self.kernels: dict[str, dict] = {}
        self.unavailable: dict[str, str] = {}
        self.owners: dict[str, str] = {}
        self.blocked_hint: dict[str, str] = {}
        self._interned: dict = {}

    def reset(self, specs: dict[str, DeviceSpec], unavailable: dict[str, str],
              owners: dict[str, str], kernels: dict[str, dict]) -> None:
        self.specs, self.unavailable, self.owners = specs, unavailable, owners
        self.kernels = kernels
        # a device whose spec survives a reload keeps its Device object, so tensors made before
        # fw.plugins.use()/register() still pass the per-op `a.device is b.device` check
        self._interned = {key: device for key, device in self._interned.items()
                          if specs.get(device.type) is device.spec
                          and device.type not in unavailable}
        for device in self._interned.values():
            device.kernels = kernels.get(device.type, _NO_KERNELS)


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
    if kind in registry.unavailable:
        raise DeviceError(
            f"device {spec!r} is installed (plugin {registry.owners[kind]}) but unusable: "
            f"{registry.unavailable[kind]}",
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
    device = Device(device_spec, index)
    registry._interned[spec] = device
    registry._interned[str(device)] = device
    return device


def available() -> list[str]:
    """Device types of loaded plugins that are usable here ("cpu", and "cuda" with a GPU)."""
    return [name for name in registry.specs if name not in registry.unavailable]
