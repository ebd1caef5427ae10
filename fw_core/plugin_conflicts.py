"""Settling what two plugins both claim: who keeps a name or a kernel, and why the other is refused.

Plugins are settled in load order: fw_core's builtins first, then every other plugin by name,
so the outcome never depends on where a distribution sits on ``sys.path``. In every case one
plugin keeps the record and the other plugin's record is refused, with a note naming both;
the rest of the refused plugin loads as if the record had never been there. A conflict never
fails a plugin.

- A **device** is kept by its own plugin, the one named ``fw_<device>`` (fw_cpu for "cpu"),
  else by the first in load order. Whoever keeps it is *the device's plugin* below. A plugin
  refused a device is refused what it registered for that device too (kernels, fusion rules,
  memory policies): they were written for its own arrays.
- An **op** contract is kept by the first in load order (fw_core's builtins before any plugin).
  The refused plugin's kernels for that op go with it: they were written for its own contract.
- An **inspector**, **thread pool** or **kernel cache** name is kept by the first in load
  order.
- A **memory policy** ``(device, name)`` is kept by the device's plugin, else the first.
- A **kernel** for ``(op, device)``: the highest priority wins. At equal priority, at every
  priority, the device's plugin wins, else the first in load order, and the tied kernels of
  other plugins are refused (a plugin replaces a kernel by registering a higher priority).
  Kernels of lower priority stay registered: they run the calls a higher kernel's guard
  refuses (``KernelSpec.guard``), and nothing else. A kernel whose op or device is not loaded
  is ignored with a note.
- **Fusion rules** are never refused: all are tried, highest priority first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .records import KernelSpec

_FIRST = "it loads first: fw_core, then plugins by name"
_FIX = "or block one of the two with FW_DISABLE_PLUGINS"

#: what a plugin registers for a device, besides kernels: refused with the device
_PER_DEVICE = ("kernels", "fusion_rules", "memory_policies")


@dataclass
class Settled:
    """The outcome of :func:`settle`.

    Attributes:
        records: per plugin, the records it keeps (the refused ones taken out), in load order.
        notes: per plugin, one line per refused record or ignored kernel.
        device_owner: the plugin that provides each device.
        kernels: the kernel that runs each ``(op, device)``, and its plugin.
        chains: per ``(op, device)``, every kept kernel with its plugin, highest priority first:
            a guarded kernel hands the calls its guard refuses to the next one.
        why: how the kernel of an ``(op, device)`` was chosen, where other kernels were there.
    """

    records: dict[str, dict[str, list]]
    notes: dict[str, list[str]]
    device_owner: dict[str, str] = field(default_factory=dict)
    kernels: dict[tuple[str, str], tuple[KernelSpec, str]] = field(default_factory=dict)
    chains: dict[tuple[str, str], list[tuple[KernelSpec, str]]] = field(default_factory=dict)
    why: dict[tuple[str, str], str] = field(default_factory=dict)


def settle(records: dict[str, dict[str, list]]) -> Settled:
    """Settle the records of every plugin (``{plugin: {family: [records]}}``, in load order)."""
    settled = Settled({name: dict(mine) for name, mine in records.items()},
                      {name: [] for name in records})
    _settle_devices(settled)
    _settle_ops(settled)
    _settle_names(settled, "inspectors", lambda r: r.name, "inspector {key!r}", lambda key: None)
    _settle_names(settled, "thread_pools", lambda r: r.name, "thread pool {key!r}",
                  lambda key: None)
    _settle_names(settled, "kernel_caches", lambda r: r.name, "kernel cache {key!r}",
                  lambda key: None)
    _settle_names(settled, "memory_policies", lambda r: (r.name, r.device),
                  "memory policy {key[0]!r} for {key[1]}", lambda key: key[1])
    _choose_kernels(settled)
    return settled


def _claims(settled: Settled, family: str, key) -> dict:
    """``{key: [plugins claiming it, in load order]}`` for one family of records."""
    claims: dict = {}
    for name, mine in settled.records.items():
        for record in mine.get(family, ()):
            holders = claims.setdefault(key(record), [])
            if name not in holders:
                holders.append(name)
    return claims


def _drop(settled: Settled, name: str, family: str, refused) -> int:
    """Take the records ``refused(record)`` out of one plugin's family; how many went."""
    before = settled.records[name][family]
    settled.records[name][family] = [r for r in before if not refused(r)]
    return len(before) - len(settled.records[name][family])


def _settle_devices(settled: Settled) -> None:
    for device, holders in _claims(settled, "devices", lambda r: r.name).items():
        home = f"fw_{device}"
        owner = home if home in holders else holders[0]
        why = "it is the device's own plugin" if owner == home else _FIRST
        settled.device_owner[device] = owner
        for name in holders:
            if name == owner:
                continue
            _drop(settled, name, "devices", lambda r: r.name == device)
            taken = {family.replace("_", " "): _drop(settled, name, family,
                                                     lambda r: r.device == device)
                     for family in _PER_DEVICE}
            counts = ", ".join(f"{family}: {n}" for family, n in taken.items() if n)
            also = f"; its records for {device} are refused with it ({counts})" if counts else ""
            settled.notes[name].append(
                f"device {device!r} refused: plugin {owner} provides it ({why}){also}. "
                f"Rename yours, {_FIX}={name}")


def _settle_ops(settled: Settled) -> None:
    for op, holders in _claims(settled, "ops", lambda r: r.name).items():
        owner = holders[0]
        for name in holders[1:]:
            _drop(settled, name, "ops", lambda r: r.name == op)
            taken = _drop(settled, name, "kernels", lambda r: r.op == op)
            also = f"; its kernels for {op} are refused with it (kernels: {taken})" if taken else ""
            settled.notes[name].append(
                f"op {op!r} refused: plugin {owner} registers an op of that name ({_FIRST})"
                f"{also}. Rename yours, {_FIX}={name}")


def _settle_names(settled: Settled, family: str, key, label: str, device_of) -> None:
    """One record per key: the device's plugin keeps it, else the first in load order."""
    for value, holders in _claims(settled, family, key).items():
        device_plugin = settled.device_owner.get(device_of(value))
        owner = device_plugin if device_plugin in holders else holders[0]
        why = f"it provides the device {device_of(value)}" if owner == device_plugin else _FIRST
        for name in holders:
            if name != owner:
                _drop(settled, name, family, lambda r: key(r) == value)
                settled.notes[name].append(
                    f"{label.format(key=value)} refused: plugin {owner} registers one of that "
                    f"name ({why}). Rename yours, {_FIX}={name}")


def _choose_kernels(settled: Settled) -> None:
    ops = {op.name for mine in settled.records.values() for op in mine["ops"]}
    candidates: dict[tuple[str, str], list[tuple[KernelSpec, str]]] = {}
    for name, mine in settled.records.items():
        for spec in mine["kernels"]:
            if spec.op in ops and spec.device in settled.device_owner:
                candidates.setdefault((spec.op, spec.device), []).append((spec, name))
                continue
            missing = (f"op {spec.op!r}" if spec.op not in ops else f"device {spec.device!r}")
            settled.notes[name].append(
                f"kernel {spec.op}@{spec.device} ignored: no {missing} is loaded")
    for key, entries in candidates.items():
        chain, why = _rank_kernels(settled, key, entries)
        settled.chains[key], settled.kernels[key] = chain, chain[0]
        if why:
            settled.why[key] = why


def _rank_kernels(settled: Settled, key, entries):
    """The kept (spec, plugin) of one (op, device), highest priority first, and how the first
    was chosen (None if it was alone). At each priority one plugin keeps its kernel (the
    device's plugin, else the first in load order); the tied kernels of others are refused."""
    op, device = key
    device_plugin = settled.device_owner[device]
    chain, ties = [], None
    for priority in sorted({spec.priority for spec, _ in entries}, reverse=True):
        tied = list(dict.fromkeys(name for spec, name in entries if spec.priority == priority))
        winner = device_plugin if device_plugin in tied else tied[0]
        why = (f"{winner} provides the device {device}" if winner == device_plugin
               else _FIRST.replace("it", winner, 1))
        runs = "which runs" if not chain else "which runs what the kernels above it refuse"
        losers = [name for name in tied if name != winner]
        for name in losers:
            _drop(settled, name, "kernels",
                  lambda r: (r.op, r.device, r.priority) == (*key, priority))
            settled.notes[name].append(
                f"kernel {op}@{device} refused: plugin {winner} has one of the same priority "
                f"{priority}, {runs} ({why}). Give yours priority={priority + 1} or more to "
                f"replace it, {_FIX}={name}")
        if not chain and losers:
            ties = f"priority {priority}, tied with {', '.join(losers)} ({why})"
        chain.append(next(e for e in entries if e[1] == winner and e[0].priority == priority))
    if ties:
        return chain, ties
    if len(chain) > 1 and chain[1][1] != chain[0][1]:
        return chain, f"priority {chain[0][0].priority} beats {chain[1][1]} " \
                      f"(priority {chain[1][0].priority})"
    return chain, None
