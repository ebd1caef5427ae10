"""Plugin discovery, selection, loading and the frozen dispatch tables.

Plugins are found through the ``fw.plugins`` entry-point group; fw_core's own ops register
through the same hooks (:mod:`fw_core.builtin`). Each plugin's hooks are called separately, so
a broken plugin is reported with its name and a fix while the rest keeps working. The results
are frozen into plain dicts (``OpDef.kernels``, the device registry, the inspector list): the
per-op path never calls pluggy.

Selection: ``FW_PLUGINS=a,b`` loads only those (plus fw_core), ``FW_DISABLE_PLUGINS=c`` blocks
some, and :func:`use` does the same from Python.
"""

from __future__ import annotations

import atexit
import os
from dataclasses import dataclass, field

import importlib_metadata
import pluggy
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from . import hookspecs
from .device import registry as device_registry
from .errors import PluginError
from .records import (
    DeviceSpec,
    FusionRule,
    Inspector,
    KernelSpec,
    MemoryPolicy,
    OpDef,
    PluginConfig,
)

GROUP = "fw.plugins"
CORE = "fw_core"

LOADED, BLOCKED, FAILED, NO_DEVICE = "loaded", "blocked", "failed", "no device"

#: (hook name, record type, provides-key) in the order hooks are called
_FAMILIES = (
    ("fw_register_ops", OpDef, "ops"),
    ("fw_register_devices", DeviceSpec, "devices"),
    ("fw_register_kernels", KernelSpec, "kernels"),
    ("fw_register_fusion_rules", FusionRule, "fusion_rules"),
    ("fw_register_memory_policies", MemoryPolicy, "memory_policies"),
    ("fw_register_inspectors", Inspector, "inspectors"),
)


@dataclass
class PluginInfo:
    """One row of ``fw plugins``: a plugin, its state, and what it provides."""

    name: str
    version: str
    distribution: str | None
    state: str
    reason: str | None = None
    fix: str | None = None
    provides: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """What it provides, in one line ("devices: cpu; kernels: 212; ...")."""
        parts = []
        for key, items in self.provides.items():
            if not items:
                continue
            shown = ", ".join(items) if len(items) <= 6 else str(len(items))
            parts.append(f"{key.replace('_', ' ')}: {shown}")
        return "; ".join(parts)


class _Tables:
    """What the last load produced."""

    def __init__(self):
        self.infos: dict[str, PluginInfo] = {}
        self.fusion_rules: dict[str, list[FusionRule]] = {}
        self.memory_policies: dict[str, dict[str, MemoryPolicy]] = {}
        self.kernel_owner: dict[tuple[str, str], str] = {}
        self.dispatch_notes: dict[tuple[str, str], str] = {}
        self.manager: pluggy.PluginManager | None = None
        self.allow: list[str] | None = None
        self.in_process: dict[str, object] = {}


_tables = _Tables()


# -- public API -------------------------------------------------------------------------------
def info() -> list[PluginInfo]:
    """Every installed plugin with its version, state (loaded / blocked / failed / no device),
    the reason and fix when it is not loaded, and what it provides."""
    return list(_tables.infos.values())


def use(names: list[str] | None) -> list[PluginInfo]:
    """Load only these plugins (fw_core is always loaded); ``use(None)`` goes back to the
    environment's selection (``FW_PLUGINS`` / ``FW_DISABLE_PLUGINS``). Tensors made before keep
    working as long as their device is still loaded."""
    _tables.allow = None if names is None else list(names)
    load()
    return info()


def register(plugin, name: str) -> PluginInfo:
    """Load a plugin from this process (a module or any object with ``@fw_core.hookimpl``
    functions) without packaging it: handy in notebooks and tests. It takes part in this and
    every later load like an installed plugin (selection and conflicts included) until
    :func:`unregister`. Returns its row of :func:`info`."""
    installed = {ep.name for ep in importlib_metadata.entry_points(group=GROUP)}
    if name == CORE or name in installed:
        raise PluginError(f"a plugin called {name!r} is already installed",
                          hint="register it under another name")
    _tables.in_process[name] = plugin
    load()
    return _tables.infos[name]


def unregister(name: str) -> None:
    """Forget a plugin added with :func:`register`, and reload without it."""
    if _tables.in_process.pop(name, None) is None:
        raise PluginError(f"no plugin {name!r} was registered in this process",
                          hint=f"registered here: {', '.join(_tables.in_process) or 'none'}")
    load()


def fusion_rules(device: str) -> list[FusionRule]:
    """The fusion rules registered for a device type, highest priority first."""
    return list(_tables.fusion_rules.get(device, ()))


def memory_policies(device: str) -> dict[str, MemoryPolicy]:
    """The memory policies registered for a device type, by name."""
    return dict(_tables.memory_policies.get(device, {}))


def device_spec(name: str) -> DeviceSpec:
    return device_registry.specs[name]


def kernel_owner(op: str, inputs=()) -> str:
    """The plugin whose kernel runs ``op`` on the device of ``inputs`` (error messages)."""
    device = next((t._device.type for t in inputs if hasattr(t, "_device")), "cpu")
    return _tables.kernel_owner.get((op, device), "unknown")


def dispatch_table() -> list[dict]:
    """For every (op, device) with a kernel: which plugin provides it and how it was chosen."""
    rows = []
    for (op, device), owner in sorted(_tables.kernel_owner.items()):
        note = _tables.dispatch_notes.get((op, device), "only kernel registered")
        rows.append({"op": op, "device": device, "plugin": owner, "why": note})
    return rows


def note_dispatch(op: str, device: str, how: str) -> None:
    """Record a dispatch decision taken at run time (a CPU fallback) for explain_dispatch."""
    _tables.dispatch_notes[(op, device)] = how
    _tables.kernel_owner.setdefault((op, device), "cpu fallback")


def missing_kernel_hint(op: str, device: str) -> str:
    """What to do when ``op`` has no kernel on ``device``."""
    inactive = [i for i in _tables.infos.values() if i.state in (BLOCKED, FAILED)]
    if inactive:
        names = ", ".join(f"{i.name} ({i.state})" for i in inactive)
        return (f"plugins that are installed but not loaded: {names} — `fw plugins` says why; "
                f"or run this op on another device (x.to('cpu'))")
    return (f"install a plugin with a {device} kernel for {op}, or move the inputs to a device "
            "that has one (x.to('cpu'))")


# -- loading ----------------------------------------------------------------------------------
def _selection() -> tuple[set[str] | None, set[str]]:
    allow = _tables.allow
    if allow is None and os.environ.get("FW_PLUGINS"):
        allow = os.environ["FW_PLUGINS"].split(",")
    blocked = {n.strip() for n in os.environ.get("FW_DISABLE_PLUGINS", "").split(",") if n.strip()}
    return (None if allow is None else {n.strip() for n in allow if n.strip()}), blocked


def _incompatibility(dist) -> str | None:
    """Why a plugin's distribution cannot run with this fw-core, or None."""
    from . import __version__

    for text in dist.requires or ():
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if canonicalize_name(req.name) == "fw-core" and req.marker is None:
            if not req.specifier.contains(__version__, prereleases=True):
                return f"needs fw-core{req.specifier}, but fw-core {__version__} is installed"
    return None


def _candidates():
    """(name, loader, version, distribution) for fw_core's builtins, every entry point and the
    plugins registered in this process."""
    from . import __version__, builtin

    yield CORE, (lambda: builtin), __version__, None
    seen = set()
    for ep in importlib_metadata.entry_points(group=GROUP):
        if ep.name in seen or ep.name == CORE:
            continue
        seen.add(ep.name)
        yield ep.name, ep, ep.dist.version if ep.dist else "?", ep.dist
    for name, plugin in _tables.in_process.items():
        if name not in seen:  # register() refuses installed names; this guards later installs
            yield name, (lambda plugin=plugin: plugin), "in-process", None


def load() -> list[PluginInfo]:
    """(Re)discover plugins and rebuild every table. Called at import and by :func:`use`."""
    _unconfigure()
    allow, blocked = _selection()
    pm = pluggy.PluginManager("fw")
    pm.add_hookspecs(hookspecs)
    infos: dict[str, PluginInfo] = {}
    modules = {}
    for name, source, version, dist in _candidates():
        dist_name = dist.metadata["Name"] if dist is not None else "fw-core"
        info_ = PluginInfo(name, version, dist_name, LOADED)
        infos[name] = info_
        if name != CORE and (name in blocked or (allow is not None and name not in allow)):
            info_.state = BLOCKED
            info_.reason = ("blocked by FW_DISABLE_PLUGINS" if name in blocked
                            else "not in the selected plugins (FW_PLUGINS / fw.plugins.use)")
            info_.fix = (f"remove {name} from FW_DISABLE_PLUGINS to load it" if name in blocked
                         else f"add {name} to FW_PLUGINS (or fw.plugins.use([...])) to load it")
            continue
        if dist is not None:
            why = _incompatibility(dist)
            if why:
                _fail(info_, f"incompatible version: {why}",
                      f"pip install -U {dist_name} fw-core (or install a {dist_name} release "
                      "built for this fw-core)")
                continue
        try:
            module = source() if callable(source) and not hasattr(source, "load") else source.load()
        except Exception as exc:
            _fail(info_, f"import error: {type(exc).__name__}: {exc}",
                  f"reinstall it (pip install --force-reinstall {dist_name}) or block it with "
                  f"FW_DISABLE_PLUGINS={name}")
            continue
        try:
            pm.register(module, name=name)
        except pluggy.PluginValidationError as exc:
            _fail(info_, f"bad hook implementation: {exc}",
                  "match the hook signatures in fw_core/hookspecs.py (docs/plugins.md), or block "
                  f"it with FW_DISABLE_PLUGINS={name}")
            continue
        except ValueError:  # pluggy: this module is already registered under another name
            other = pm.get_name(module)
            _fail(info_, f"its module {getattr(module, '__name__', module)} is already loaded "
                  f"as plugin {other}", f"uninstall one of the two distributions ({dist_name}, "
                  f"{infos[other].distribution}), or block it with FW_DISABLE_PLUGINS={name}")
            continue
        unknown = [c.name for c in pm.get_hookcallers(module) or () if not c.has_spec()]
        if unknown:
            pm.unregister(module)
            _fail(info_, f"implements unknown hook(s) {', '.join(unknown)}",
                  "check the spelling against fw_core/hookspecs.py (docs/plugins.md)")
            continue
        modules[name] = module

    records = _collect(pm, modules, infos)
    _freeze(records, infos)
    _forget_failed(pm, modules, records, infos)  # failed by a conflict: no fw_configure
    _tables.infos, _tables.manager = infos, pm
    _configure(pm, infos)
    if _forget_failed(pm, modules, records, infos):  # failed in fw_configure: drop its records
        _freeze(records, infos)
    return list(infos.values())


def _forget_failed(pm, modules, records, infos) -> bool:
    """Unregister failed plugins and drop their records; True if any records were dropped."""
    dropped = False
    for name, module in modules.items():
        if infos[name].state == FAILED:
            if pm.is_registered(module):
                pm.unregister(module)
            infos[name].provides = {}
            dropped |= records.pop(name, None) is not None
    return dropped


def _fail(info_: PluginInfo, reason: str, fix: str) -> None:
    info_.state, info_.reason, info_.fix = FAILED, reason, fix


def _collect(pm, modules, infos) -> dict[str, dict[str, list]]:
    """Call each registered plugin's register hooks on their own; a raising hook or a wrong
    record type fails that plugin only."""
    records: dict[str, dict[str, list]] = {}
    for name, module in modules.items():
        mine: dict[str, list] = {}
        try:
            for hook_name, record_type, key in _FAMILIES:
                impls = [i for i in getattr(pm.hook, hook_name).get_hookimpls()
                         if i.plugin is module]
                items = []
                for impl in impls:
                    for item in impl.function() or ():
                        if not isinstance(item, record_type):
                            raise TypeError(f"{hook_name} returned {type(item).__name__}, "
                                            f"expected {record_type.__name__} records")
                        items.append(item)
                mine[key] = items
        except Exception as exc:
            _fail(infos[name], f"{type(exc).__name__} in its hooks: {exc}",
                  f"fix the plugin's hook, or block it with FW_DISABLE_PLUGINS={name}")
            pm.unregister(module)
            continue
        records[name] = mine
    return records


def _freeze(records, infos) -> None:
    """Validate everything together, fail conflicting plugins, then build the tables."""
    from .ops import registry

    while True:
        culprit = _first_conflict(records)
        if culprit is None:
            break
        name, reason, fix = culprit
        _fail(infos[name], reason, fix)
        del records[name]

    ops: dict[str, OpDef] = {}
    devices: dict[str, DeviceSpec] = {}
    owners: dict[str, str] = {}
    unavailable: dict[str, str] = {}
    for name, mine in records.items():
        for op in mine["ops"]:
            ops[op.name] = op
        for spec in mine["devices"]:
            devices[spec.name] = spec
            owners[spec.name] = name
            reason = _unavailable_reason(spec)
            if reason:
                unavailable[spec.name] = reason
    for op in (*registry.OPS.values(), *ops.values()):
        op.kernels.clear()
    registry.OPS.clear()
    registry.OPS.update(ops)

    chosen: dict[tuple[str, str], tuple[KernelSpec, str]] = {}
    _tables.dispatch_notes = {}
    for name, mine in records.items():
        infos[name].notes.clear()  # this freeze's notes only (load may freeze twice)
        for spec in mine["kernels"]:
            if spec.op not in ops or spec.device not in devices:
                missing = "op" if spec.op not in ops else "device"
                infos[name].notes.append(
                    f"kernel {spec.op}@{spec.device} ignored: no {missing} "
                    f"{spec.op if missing == 'op' else spec.device!r} is loaded")
                continue
            key = (spec.op, spec.device)
            previous = chosen.get(key)
            if previous is None or spec.priority > previous[0].priority:
                if previous is not None:
                    _tables.dispatch_notes[key] = (
                        f"priority {spec.priority} beats {previous[1]} (priority "
                        f"{previous[0].priority})")
                chosen[key] = (spec, name)
            elif previous is not None:
                _tables.dispatch_notes[key] = (
                    f"priority {previous[0].priority} beats {name} (priority {spec.priority})")
    _tables.kernel_owner = {}
    for (op_name, device), (spec, owner) in chosen.items():
        ops[op_name].kernels[device] = _restricted(spec, owner) if spec.dtypes else spec.fn
        _tables.kernel_owner[(op_name, device)] = owner

    blocked_hint = {}
    for i in infos.values():
        if i.state in (BLOCKED, FAILED) and i.name.startswith("fw_"):
            blocked_hint[i.name[3:]] = f"plugin {i.name} is {i.state}: {i.reason}; {i.fix}"
    device_registry.reset(devices, unavailable, owners)
    device_registry.blocked_hint = blocked_hint

    _tables.fusion_rules = {}
    _tables.memory_policies = {}
    inspectors: dict[str, Inspector] = {}
    for name, mine in records.items():
        for rule in mine["fusion_rules"]:
            _tables.fusion_rules.setdefault(rule.device, []).append(rule)
        for policy in mine["memory_policies"]:
            _tables.memory_policies.setdefault(policy.device, {})[policy.name] = policy
        for inspector in mine["inspectors"]:
            inspectors[inspector.name] = inspector
        info_ = infos[name]
        info_.provides = {
            "ops": [o.name for o in mine["ops"]],
            "devices": [d.name for d in mine["devices"]],
            "kernels": [f"{k.op}@{k.device}" for k in mine["kernels"]],
            "fusion_rules": [r.name for r in mine["fusion_rules"]],
            "memory_policies": [f"{p.name}@{p.device}" for p in mine["memory_policies"]],
            "inspectors": [i.name for i in mine["inspectors"]],
        }
        own_devices = mine["devices"]
        if own_devices and all(d.name in unavailable for d in own_devices):
            info_.state = NO_DEVICE
            info_.reason = "; ".join(f"{d.name}: {unavailable[d.name]}" for d in own_devices)
            info_.fix = "install the device's driver/runtime, or keep using the other devices"
    for rules in _tables.fusion_rules.values():
        rules.sort(key=lambda r: -r.priority)
    from . import inspect

    inspect._reset(inspectors)


def _first_conflict(records):
    """(plugin, reason, fix) for the first later plugin that clashes with an earlier one."""
    seen: dict[tuple, tuple[str, int]] = {}
    for name, mine in records.items():
        for family, key_of in (("ops", lambda r: r.name), ("devices", lambda r: r.name),
                               ("inspectors", lambda r: r.name)):
            for record in mine[family]:
                key = (family, key_of(record))
                if key in seen and seen[key][0] != name:
                    return (name, f"{family[:-1]} {key[1]!r} is already registered by plugin "
                            f"{seen[key][0]}", "rename it, or block one of the two with "
                            "FW_DISABLE_PLUGINS")
                seen[key] = (name, 0)
        for spec in mine["kernels"]:
            key = ("kernel", spec.op, spec.device)
            if key in seen and seen[key][0] != name and seen[key][1] == spec.priority:
                return (name, f"kernel for {spec.op} on {spec.device} conflicts with plugin "
                        f"{seen[key][0]}: both have priority {spec.priority}",
                        f"give one KernelSpec a higher priority=, or block one plugin with "
                        f"FW_DISABLE_PLUGINS={name}")
            if key not in seen or spec.priority > seen[key][1]:
                seen[key] = (name, spec.priority)
    return None


def _unavailable_reason(spec: DeviceSpec) -> str | None:
    try:
        return spec.unavailable_reason()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


def _restricted(spec: KernelSpec, owner: str):
    """Wrap a kernel that handles only some dtypes so others get a clear DTypeError."""
    from .errors import DTypeError

    allowed = spec.dtypes
    fn = spec.fn

    def kernel(*arrays, **attrs):
        for a in arrays:
            dtype = getattr(a, "dtype", None)
            if dtype is not None and dtype.name not in allowed:
                raise DTypeError(
                    f"the {spec.device} kernel of plugin {owner} does not handle {dtype.name}",
                    op=spec.op, hint=f"convert to one of {', '.join(sorted(allowed))}, or run on "
                    "another device")
        return fn(*arrays, **attrs)

    return kernel


def _configure(pm, infos) -> None:
    from .ops import registry

    loaded = tuple(n for n, i in infos.items() if i.state in (LOADED, NO_DEVICE))
    config = PluginConfig(loaded, tuple(device_registry.specs), tuple(registry.OPS))
    for impl in pm.hook.fw_configure.get_hookimpls():
        name = pm.get_name(impl.plugin)
        try:
            impl.function(config=config)
        except Exception as exc:
            _fail(infos[name], f"{type(exc).__name__} in fw_configure: {exc}",
                  f"fix the plugin's fw_configure, or block it with FW_DISABLE_PLUGINS={name}")


def _unconfigure() -> None:
    pm = _tables.manager
    if pm is None:
        return
    for impl in pm.hook.fw_unconfigure.get_hookimpls():
        try:
            impl.function()
        except Exception:  # noqa: S110 - a failing teardown must not stop the reload
            pass
    _tables.manager = None


def require(name: str) -> PluginInfo:
    """The info of a loaded plugin, or a PluginError saying why it is not loaded."""
    info_ = _tables.infos.get(name)
    if info_ is None:
        raise PluginError(f"plugin {name} is not installed",
                          hint=f"pip install {name.replace('_', '-')}")
    if info_.state not in (LOADED, NO_DEVICE):
        raise PluginError(f"plugin {name} is {info_.state}: {info_.reason}", hint=info_.fix)
    return info_


atexit.register(_unconfigure)
