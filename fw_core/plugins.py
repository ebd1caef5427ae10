"""Plugin discovery, selection, loading and the frozen dispatch tables.

Plugins are found through the ``fw.plugins`` entry-point group; fw_core's own ops register
through the same hooks (:mod:`fw_core.builtin`). Each plugin's hooks are called separately, so
a broken plugin is reported with its name and a fix while the rest keeps working. The results
are frozen into plain dicts (each device type's dispatch table, the device registry, the
inspector list): the
per-op path never calls pluggy.

Plugins load in a fixed order, fw_core's builtins first and then by name, whatever the order
of ``sys.path``; what two plugins both claim is settled in that order by
:mod:`fw_core.plugin_conflicts`, which refuses the loser's record and never fails a plugin.
Anything a plugin raises at import, in a hook or in ``fw_configure`` fails that plugin only,
``SystemExit`` included (only ``KeyboardInterrupt`` goes through). Each import is timed
(``PluginInfo.import_seconds``). A plugin that crashes the interpreter cannot be contained in
it: :func:`isolated_info` (``fw plugins --isolate``) loads each in a child process instead.

Selection: ``FW_PLUGINS=a,b`` loads only those (plus fw_core), ``FW_DISABLE_PLUGINS=c`` blocks
some, and :func:`use` does the same from Python.
"""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import os
import time
from dataclasses import dataclass, field

import importlib_metadata
import pluggy

from . import hookspecs, kernel_chain, plugin_conflicts, plugin_discovery
from .device import registry as device_registry
from .errors import PluginError
from .plugin_discovery import CORE, GROUP
from .records import (
    DeviceSpec,
    FusionRule,
    Inspector,
    KernelCache,
    KernelSpec,
    MemoryPolicy,
    OpDef,
    PluginConfig,
    ThreadPool,
)

LOADED, BLOCKED, FAILED, NO_DEVICE = "loaded", "blocked", "failed", "no device"

#: a plugin whose import takes longer gets a warning in ``fw plugins`` (every import waits)
SLOW_IMPORT_SECONDS = 1.0

#: (hook name, record type, provides-key) in the order hooks are called
_FAMILIES = (
    ("fw_register_ops", OpDef, "ops"),
    ("fw_register_devices", DeviceSpec, "devices"),
    ("fw_register_kernels", KernelSpec, "kernels"),
    ("fw_register_fusion_rules", FusionRule, "fusion_rules"),
    ("fw_register_memory_policies", MemoryPolicy, "memory_policies"),
    ("fw_register_inspectors", Inspector, "inspectors"),
    ("fw_register_thread_pools", ThreadPool, "thread_pools"),
    ("fw_register_kernel_caches", KernelCache, "kernel_caches"),
)


@dataclass
class PluginInfo:
    """One row of ``fw plugins``: a plugin, its state, and what it provides.

    ``notes`` are what to know about a plugin that loaded (a refused or ignored record, a slow
    import); ``import_seconds`` is how long its module took to import, None if it was not
    imported (blocked, incompatible, fw_core itself, a plugin registered in-process).
    """

    name: str
    version: str
    distribution: str | None
    state: str
    reason: str | None = None
    fix: str | None = None
    provides: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    import_seconds: float | None = None

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
        self.kernel_caches: dict[str, tuple[KernelCache, str]] = {}
        #: per (op, device): the kernels kept, highest priority first, with their plugins
        self.chains: dict[tuple[str, str], list] = {}
        self.import_seconds: dict[str, float] = {}  # each plugin's first import in this process
        #: plugin -> the device types it provides, until info() has probed whether they work
        self.unprobed: dict[str, list[str]] = {}


_tables = _Tables()


# -- public API -------------------------------------------------------------------------------
def info() -> list[PluginInfo]:
    """Every installed plugin with its version, state (loaded / blocked / failed / no device),
    the reason and fix when it is not loaded, and what it provides.

    A device plugin's devices are probed here (once per load) rather than at ``import fw_core``:
    asking CuPy whether there is a GPU imports CuPy."""
    _probe_devices()
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
    return next(row for row in info() if row.name == name)


def unregister(name: str) -> None:
    """Forget a plugin added with :func:`register`, and reload without it."""
    if _tables.in_process.pop(name, None) is None:
        raise PluginError(f"no plugin {name!r} was registered in this process",
                          hint=f"registered here: {', '.join(_tables.in_process) or 'none'}")
    load()


def isolated_info(timeout: float = 60.0) -> list[PluginInfo]:
    """Like :func:`info`, but each selected plugin is loaded in a child process of its own
    (with fw_core, and fw_cpu for the CPU device): a plugin that crashes the interpreter (a
    segfault in native code, ``os._exit``, ``abort``) or does not finish loading within
    ``timeout`` seconds is a failed row naming it, with the fix, instead of taking this
    process down. Each row is what that plugin's child saw; fw_core's and those of plugins
    registered in this process are this process's. ``fw plugins --isolate`` prints these."""
    from . import plugin_isolation

    allow, blocked = _selection()
    rows, isolated = [], []
    for name, _, version, dist in plugin_discovery.candidates(_tables.in_process):
        row = _tables.infos.get(name) if name == CORE or name in _tables.in_process else None
        if row is None:
            row = _row(name, version, dist)
            if not _blocked(row, allow, blocked):
                isolated.append(row)
        rows.append(row)
    seen = {r.name: r for r in plugin_isolation.load_each(isolated, timeout)}
    return [seen.get(r.name, r) for r in rows]


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


def serving(op: str, device: str, arrays: tuple, attrs: dict) -> tuple[str, str] | None:
    """Which plugin's kernel runs this call of ``op`` on ``device`` (raw arrays and attributes,
    as a kernel gets them), why, and the function it is: the guards of the chain are asked in
    order, as the call itself does. None when no kernel of ``device`` is registered for ``op``."""
    chain = _tables.chains.get((op, device))
    if not chain:
        return None
    refused = []
    for spec, owner in chain:
        if spec.guard is not None and not kernel_chain.guard_of(spec)(*arrays, **attrs):
            takes = spec.takes or "some calls"
            refused.append(f"{owner}'s guard refused it ({owner} takes {takes})")
            continue
        if spec.guard is not None:
            taken = f"{owner}'s guard takes it ({spec.takes or 'its guard holds'})"
        elif refused:
            taken = f"{owner} runs what the guards above refuse"
        else:
            taken = _tables.dispatch_notes.get((op, device), "only kernel registered")
        return owner, "; ".join([*refused, taken, f"it runs {kernel_chain.name_of(spec)}"])
    return "none", "; ".join(refused) + "; no kernel takes it"


def kernel_caches() -> list[dict]:
    """Every registered kernel cache: its name, plugin and counters now (a cache whose report
    fails says so instead of its counters)."""
    rows = []
    for name, (cache, plugin) in _tables.kernel_caches.items():
        try:
            counters = dict(cache.info())
        except Exception as exc:  # a broken report must not break explain()
            counters = {"error": f"{type(exc).__name__}: {exc}"}
        rows.append({"name": name, "plugin": plugin, **counters})
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


def _row(name: str, version: str, dist) -> PluginInfo:
    return PluginInfo(name, version, dist.name if dist is not None else "fw-core", LOADED)


def _blocked(info_: PluginInfo, allow: set[str] | None, blocked: set[str]) -> bool:
    """Mark a plugin the selection leaves out as blocked, with the reason; True if it is."""
    name = info_.name
    if name == CORE or (name not in blocked and (allow is None or name in allow)):
        return False
    info_.state = BLOCKED
    if name in blocked:
        info_.reason = "blocked by FW_DISABLE_PLUGINS"
        info_.fix = f"remove {name} from FW_DISABLE_PLUGINS to load it"
    else:
        info_.reason = "not in the selected plugins (FW_PLUGINS / fw.plugins.use)"
        info_.fix = f"add {name} to FW_PLUGINS (or fw.plugins.use([...])) to load it"
    return True


def load() -> None:
    """(Re)discover plugins and rebuild every table. Called at import and by :func:`use`;
    :func:`info` then lists the plugins."""
    from . import plugin_isolation

    _unconfigure()
    allow, blocked = _selection()
    if plugin_isolation.isolating_command():
        allow = set()  # `fw plugins --isolate` loads every plugin in a child process instead
    pm = pluggy.PluginManager("fw")
    pm.add_hookspecs(hookspecs)
    infos: dict[str, PluginInfo] = {}
    modules = {}
    with _traceback_on_crash():
        for name, source, version, dist in plugin_discovery.candidates(_tables.in_process):
            info_ = infos[name] = _row(name, version, dist)
            if _blocked(info_, allow, blocked):
                continue
            module = _import(info_, source, dist)
            if module is not None and _register(pm, module, info_, infos):
                modules[name] = module

        records = _collect(pm, modules, infos)
        _freeze(records, infos)
        _tables.infos, _tables.manager = infos, pm
        _configure(pm, infos)
        if _forget_failed(pm, modules, records, infos):  # failed in fw_configure: drop its records
            _freeze(records, infos)


def _import(info_: PluginInfo, source, dist):
    """A plugin's module, or None when it failed (the reason set on ``info_``). The time of its
    first import in this process is kept in ``info_.import_seconds``."""
    name, dist_name = info_.name, info_.distribution
    if dist is not None:
        why = plugin_discovery.incompatibility(dist)
        if why:
            _fail(info_, f"incompatible version: {why}",
                  f"pip install -U {dist_name} fw-core (or install a {dist_name} release "
                  "built for this fw-core)")
            return None
    if not hasattr(source, "load"):  # fw_core's builtins, or a plugin registered in-process
        return source()
    started = time.perf_counter()
    try:
        return source.load()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # sys.exit() at import, too, is this plugin's failure only
        _fail(info_, f"import error: {_describe(exc)}",
              f"reinstall it (pip install --force-reinstall {dist_name}) or block it with "
              f"FW_DISABLE_PLUGINS={name}")
        return None
    finally:
        seconds = _tables.import_seconds.setdefault(name, time.perf_counter() - started)
        info_.import_seconds = round(seconds, 4)


def _register(pm, module, info_: PluginInfo, infos) -> bool:
    """Register a plugin's hooks with pluggy; False (and the reason) if they are malformed."""
    name = info_.name
    try:
        pm.register(module, name=name)
    except pluggy.PluginValidationError as exc:
        _fail(info_, f"bad hook implementation: {exc}",
              "match the hook signatures in fw_core/hookspecs.py (docs/plugins.md), or block "
              f"it with FW_DISABLE_PLUGINS={name}")
        return False
    except ValueError:  # pluggy: this module is already registered under another name
        other = pm.get_name(module)
        _fail(info_, f"its module {getattr(module, '__name__', module)} is already loaded "
              f"as plugin {other}", f"uninstall one of the two distributions "
              f"({info_.distribution}, {infos[other].distribution}), or block it with "
              f"FW_DISABLE_PLUGINS={name}")
        return False
    unknown = [c.name for c in pm.get_hookcallers(module) or () if not c.has_spec()]
    if unknown:
        pm.unregister(module)
        _fail(info_, f"implements unknown hook(s) {', '.join(unknown)}",
              "check the spelling against fw_core/hookspecs.py (docs/plugins.md)")
        return False
    return True


def _describe(exc: BaseException) -> str:
    """An exception a plugin raised, for its reason line."""
    if isinstance(exc, SystemExit):
        code = "" if exc.code is None else repr(exc.code)
        return f"SystemExit: it called sys.exit({code})"
    return f"{type(exc).__name__}: {exc}"


@contextlib.contextmanager
def _traceback_on_crash():
    """While plugins load, a crash of the interpreter (a segfault in a plugin's native code)
    prints a Python traceback naming the plugin's file, instead of ending the process in
    silence. Left as it was if faulthandler is on already, or stderr is no file."""
    if faulthandler.is_enabled():
        yield
        return
    try:
        faulthandler.enable()
    except (AttributeError, ValueError, OSError, RuntimeError):  # stderr None, or no fileno
        yield
        return
    try:
        yield
    finally:
        faulthandler.disable()


def _import_notes(info_: PluginInfo) -> list[str]:
    """The warning for a plugin whose import takes more than :data:`SLOW_IMPORT_SECONDS`."""
    seconds = info_.import_seconds
    if seconds is None or seconds <= SLOW_IMPORT_SECONDS:
        return []
    return [f"slow import: importing it took {seconds:.1f} s, which every `import fw_core` "
            f"waits for; block it where it is not used (FW_DISABLE_PLUGINS={info_.name}), or "
            "ask its authors to import heavy dependencies when first needed"]


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
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a sys.exit() in a hook fails that plugin only
            _fail(infos[name], f"{type(exc).__name__} in its hooks: {exc}",
                  f"fix the plugin's hook, or block it with FW_DISABLE_PLUGINS={name}")
            pm.unregister(module)
            continue
        records[name] = mine
    return records


def _freeze(records, infos) -> None:
    """Settle conflicts (:mod:`fw_core.plugin_conflicts`), then build the tables."""
    from .ops import registry

    settled = plugin_conflicts.settle(records)
    ops: dict[str, OpDef] = {}
    devices: dict[str, DeviceSpec] = {}
    for mine in settled.records.values():
        for op in mine["ops"]:
            ops[op.name] = op
        for spec in mine["devices"]:
            devices[spec.name] = spec
    registry.OPS.clear()
    registry.OPS.update(ops)

    from .ops.dispatch import forget_fallbacks

    forget_fallbacks()
    _tables.chains = dict(settled.chains)
    _tables.dispatch_notes = dict(settled.why)
    _tables.kernel_owner = {}
    tables: dict[str, dict] = {device: {} for device in devices}
    lazy: dict[str, dict] = {}  # device type -> {op: chain}, composed at its first device
    for key, chain in settled.chains.items():
        op_name, device = key
        op = ops[op_name]
        if kernel_chain.is_lazy(chain):
            lazy.setdefault(device, {})[op] = chain
            tables[device][op] = device_registry.unimported(device, op)
        else:
            tables[device][op] = kernel_chain.compose(chain)
        _tables.kernel_owner[key] = chain[0][1]
        guarded = kernel_chain.describe(chain)
        if guarded:
            _tables.dispatch_notes[key] = "; ".join(
                filter(None, (_tables.dispatch_notes.get(key), guarded)))

    blocked_hint = {}
    for i in infos.values():
        if i.state in (BLOCKED, FAILED) and i.name.startswith("fw_"):
            blocked_hint[i.name[3:]] = f"plugin {i.name} is {i.state}: {i.reason}; {i.fix}"
    device_registry.reset(devices, settled.device_owner, tables, lazy)
    device_registry.blocked_hint = blocked_hint

    _tables.fusion_rules = {}
    _tables.memory_policies = {}
    found_inspectors: dict[str, Inspector] = {}
    for name, info_ in infos.items():
        info_.notes = [*_import_notes(info_), *settled.notes.get(name, ())]
    for name, mine in settled.records.items():
        for rule in mine["fusion_rules"]:
            _tables.fusion_rules.setdefault(rule.device, []).append(rule)
        for policy in mine["memory_policies"]:
            _tables.memory_policies.setdefault(policy.device, {})[policy.name] = policy
        for inspector in mine["inspectors"]:
            found_inspectors[inspector.name] = inspector
        info_ = infos[name]
        info_.provides = {
            "ops": [o.name for o in mine["ops"]],
            "devices": [d.name for d in mine["devices"]],
            "kernels": [f"{k.op}@{k.device}" for k in mine["kernels"]],
            "fusion_rules": [r.name for r in mine["fusion_rules"]],
            "memory_policies": [f"{p.name}@{p.device}" for p in mine["memory_policies"]],
            "inspectors": [i.name for i in mine["inspectors"]],
            "thread_pools": [p.name for p in mine["thread_pools"]],
            "kernel_caches": [c.name for c in mine["kernel_caches"]],
        }
    _tables.unprobed = {name: [d.name for d in mine["devices"]]
                        for name, mine in settled.records.items() if mine["devices"]}
    for rules in _tables.fusion_rules.values():
        rules.sort(key=lambda r: -r.priority)
    from . import inspectors, threads

    inspectors._reset(found_inspectors)
    _tables.kernel_caches = {cache.name: (cache, name) for name, mine in settled.records.items()
                             for cache in mine["kernel_caches"]}
    threads._reset({pool.name: (pool, name) for name, mine in settled.records.items()
                    for pool in mine["thread_pools"]})


def _probe_devices() -> None:
    """Mark each loaded plugin whose devices are all unusable here "no device", with the
    reasons its devices give; each load's devices are asked once."""
    for name, devices in _tables.unprobed.items():
        info_ = _tables.infos[name]
        reasons = {d: device_registry.unavailable_reason(d) for d in devices}
        if info_.state == LOADED and all(reasons.values()):
            info_.state = NO_DEVICE
            info_.reason = "; ".join(f"{d}: {why}" for d, why in reasons.items())
            info_.fix = "install the device's driver/runtime, or keep using the other devices"
    _tables.unprobed = {}


def _configure(pm, infos) -> None:
    from .ops import registry

    loaded = tuple(n for n, i in infos.items() if i.state in (LOADED, NO_DEVICE))
    config = PluginConfig(loaded, tuple(device_registry.specs), tuple(registry.OPS))
    for impl in pm.hook.fw_configure.get_hookimpls():
        name = pm.get_name(impl.plugin)
        try:
            impl.function(config=config)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
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
