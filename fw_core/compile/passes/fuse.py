"""Fusion: group nodes by Jacobian structure; the device's fusion rules write one kernel each.

fw_core decides the grouping, the device's rules (``fw.plugins.fusion_rules(device)``) only
generate code, and a measurement decides whether a group pays. Two kinds of group:

- *pointwise*: elementwise / broadcasting nodes (and elementwise comparisons, logical ops and
  ``where``, which activations' backwards use) that share one output shape, optionally closed
  by a reduction of a member's value (``sum``, ``mean``, ``sum_to``: the rules say which);
- *contraction*: a matmul / linear / conv node followed by an elementwise epilogue on its
  result (bias add, activation).

Before those, rules that fuse *chains* (``FusionRule.chains``) get runs of nodes they support,
each reading the previous member's result as its first input, whatever the structures (a
convolution, its activation and a pooling, which a library may keep in its own memory layout
between them). A chain no rule takes, or that loses the measurement, leaves its nodes to the
structure groups.

A group replaces its members at the place of its last member, so every value is computed
before it is used. That allows non-fusable nodes in between (up to :data:`LOOKAHEAD`) as long
as they read nothing the group defines; Effects and nodes that write into their inputs
(batch_norm) are barriers. A member whose value is used outside the group (by a later step,
an Effect, or as a graph output) becomes a group output.

Kernels are cached process-wide by ``(rule.name, group.signature())``: the signature holds no
sizes, so a new batch size or sequence length reuses them with no code generation. Threads
that compile at once share the cache; a lock makes each kernel generated once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

from ...records import Structure
from ..ir import Group, Node, Value
from .dce import writes_inputs

#: how many non-fusable nodes a group may reach past to take a later member
LOOKAHEAD = 8

_POINTWISE = frozenset({Structure.ELEMENTWISE, Structure.BROADCAST})
_kernels: dict[tuple, tuple] = {}  # (rule name, signature) -> (kernel or None,)
_stats = {"hits": 0, "misses": 0}
_cache_lock = threading.Lock()  # guards _kernels and _stats


def kernel_cache_info() -> dict[str, int]:
    """Hits, misses and size of the process-wide cache of generated kernels."""
    with _cache_lock:
        return {"hits": _stats["hits"], "misses": _stats["misses"], "size": len(_kernels)}


def clear_kernel_cache() -> None:
    """Forget every generated kernel and reset the counters (tests, benchmarks)."""
    with _cache_lock:
        _kernels.clear()
        _stats.update(hits=0, misses=0)


def default_decide(group: Group, fused_seconds: float, unfused_seconds: float) -> bool:
    """Fuse when the fused kernel was faster on the traced arrays."""
    return fused_seconds < unfused_seconds


def fuse(graph, rules, decide: Callable[[Group, float, float], bool] | None = None,
         known: Callable[[Group], bool | None] | None = None,
         sync: Callable[[], None] = lambda: None,
         to_device: Callable[[np.ndarray], object] = lambda array: array) -> list[Group]:
    """Replace runs of fusable nodes in ``graph.steps`` by Groups; return the groups made.

    ``rules`` are the target device's FusionRules (tried highest priority first; one that
    returns None from ``generate`` passes the group on). Each group is run fused and unfused
    (best of a few runs) and kept only if ``decide(group, fused_seconds, unfused_seconds)``
    says so (default: when faster) and the fused results match the unfused ones. It runs on
    the arrays the graph knows (``graph.samples``, constants, external tensors) and on
    stand-ins of the traced shapes and dtypes for the rest (:func:`stand_in`, moved to the
    device by ``to_device``): a trace keeps none of the arrays it saw.
    ``known(group)`` may return an earlier choice for a group of the same structure (its
    ``signature()``: sizes aside), which is then used without measuring again. ``sync()``
    waits for the device's queued work, so the times of an asynchronous device (a GPU) are
    of the kernels, not of their launches.
    """
    rules = sorted(rules, key=lambda r: -r.priority)
    decide = decide or default_decide
    tally = {"hits": 0, "misses": 0}  # this graph's cache use (other threads' aside)
    escaping = {v.index for v in graph.outputs}
    made, skipped, names = [], [], []
    for find, chain in ((_chains, True), (_candidates, False)):
        round_rules = [r for r in rules if r.chains is chain]
        if not round_rules:
            continue
        users = graph.users()  # the chains made are steps of the graph the second round sees
        kept = []
        for members, candidates in find(graph.steps, round_rules):
            group = _make_group(members, users, escaping, chain)
            if not group.outputs:
                continue
            kernel, rule = _generate(group, candidates, tally)
            if kernel is None:
                skipped.append(f"{_name(group)}: no rule generates it")
                continue
            group.kernel, group.rule = kernel, rule
            earlier = None if known is None else known(group)
            if earlier is not None:
                if earlier:
                    kept.append(group)
                    names.append(f"{_name(group)} (as decided before)")
                else:
                    skipped.append(f"{_name(group)}: not chosen before")
                continue
            verdict = _measure(graph, group, sync, to_device)
            if isinstance(verdict, str):
                skipped.append(f"{_name(group)}: {verdict}")
                continue
            if verdict is not None and not decide(group, *verdict):
                skipped.append(f"{_name(group)}: not chosen (fused {_ms(verdict[0])} vs "
                               f"unfused {_ms(verdict[1])})")
                continue
            kept.append(group)
            names.append(_name(group) if verdict is None else
                         f"{_name(group)} {_ms(verdict[0])} vs {_ms(verdict[1])}")
        _rewrite(graph, kept)
        made += kept
    graph.log.append(
        f"fuse: {len(made)} groups ({', '.join(names) or 'none'})"
        + (f"; left unfused: {'; '.join(skipped)}" if skipped else "")
        + f"; kernel cache {tally['hits']} hits, {tally['misses']} misses")
    return made


# -- grouping -------------------------------------------------------------------------------------
def _role(node: Node) -> str | None:
    structure = node.op.structure
    if structure in _POINTWISE:
        return "pointwise"
    if structure is Structure.REDUCTION:
        return "reduction"
    if structure is Structure.CONTRACTION:
        return "contraction"
    return None


def _accepting(node: Node, rules) -> list:
    structure = node.op.structure
    return [r for r in rules if structure in r.structures
            and (r.supports is None or r.supports(node))]


class _Open:
    """The group being gathered: its members, kind, shape and the rules that take them all."""

    def __init__(self, node: Node, kind: str, rules: list):
        self.members = [node]
        self.kind = kind
        self.shape = node.out.shape
        self.rules = rules
        self.defined = {node.out.index}
        self.passed = 0  # non-members reached past

    def joins(self, node: Node, role: str | None, rules: list) -> list:
        """The rules under which ``node`` can join (empty: it cannot)."""
        common = [r for r in self.rules if r in rules]
        reads = {v.index for v in node.reads}
        if not common or role is None:
            return []
        if role == "pointwise" and node.out.shape == self.shape:
            return common if self.kind == "pointwise" or reads & self.defined else []
        if role == "reduction" and self.kind == "pointwise" and node.inputs and \
                node.inputs[0].__class__ is Value and node.inputs[0].index in self.defined:
            return common
        return []

    def add(self, node: Node, rules: list) -> None:
        self.members.append(node)
        self.rules = rules
        self.defined.add(node.out.index)


def _candidates(steps, rules):
    """(member nodes, rules that take them all) for each run worth fusing, in program order."""
    found = []
    current: _Open | None = None

    def close():
        nonlocal current
        if current is not None and len(current.members) > 1:
            found.append((current.members, current.rules))
        current = None

    for step in steps:
        if step.__class__ is not Node or writes_inputs(step):
            close()
            continue
        role = _role(step)
        accepting = _accepting(step, rules) if role else []
        if current is not None:
            common = current.joins(step, role, accepting)
            if common:
                current.add(step, common)
                if role == "reduction":
                    close()
                continue
            reads_group = any(v.index in current.defined for v in step.reads)
            current.passed += 1
            if reads_group or current.passed > LOOKAHEAD or \
                    (accepting and role in ("pointwise", "contraction")):
                close()
        if current is None and accepting and role in ("pointwise", "contraction"):
            current = _Open(step, role, accepting)
    close()
    return found


def _chains(steps, rules):
    """(member nodes, chain rules that take them all) for each chain worth fusing: two or more
    nodes some rule supports, each reading the previous member's result as its first input.
    Nodes in between (up to :data:`LOOKAHEAD`) may not read a member's result, since the
    group runs where its last member was; an Effect or a node writing into its inputs ends a
    chain."""
    found, members, common, passed = [], [], [], 0

    def close():
        nonlocal members, common, passed
        if len(members) > 1:
            found.append((members, common))
        members, common, passed = [], [], 0

    for step in steps:
        if step.__class__ is not Node or writes_inputs(step):
            close()
            continue
        accepting = _accepting(step, rules)
        if members:
            first = step.inputs[0] if step.inputs else None
            joint = [r for r in common if r in accepting]
            if joint and first.__class__ is Value and first.index == members[-1].out.index:
                members.append(step)
                common, passed = joint, 0
                continue
            passed += 1
            defined = {n.out.index for n in members}
            if passed > LOOKAHEAD or any(v.index in defined for v in step.reads):
                close()
        if not members and accepting:
            members, common = [step], accepting
    close()
    return found


def _make_group(members: list[Node], users: dict, escaping: set, chain: bool) -> Group:
    inside = {id(n) for n in members}
    defined = {n.out.index for n in members}
    inputs, seen = [], set()
    for node in members:
        for v in node.reads:
            if v.index not in defined and v.index not in seen:
                seen.add(v.index)
                inputs.append(v)
    outputs = [n.out for n in members if n.out.index in escaping or
               any(id(s) not in inside for s in users.get(n.out.index, ()))]
    kinds = {_role(n) for n in members}
    structure = ("chain" if chain else "contraction+epilogue" if "contraction" in kinds else
                 "elementwise+reduction" if "reduction" in kinds else "elementwise")
    return Group(list(members), inputs, outputs, structure=structure)


def _name(group: Group) -> str:
    return "+".join(n.op.name for n in group.nodes)


def _generate(group: Group, rules, tally: dict) -> tuple:
    """(kernel, rule) from the first rule that generates one (cached), else (None, None);
    counts cache hits and misses in ``tally`` and in the process-wide counters."""
    signature = group.signature()  # rule names are unique, so (name, signature) is a kernel
    for rule in rules:
        key = (rule.name, signature)
        with _cache_lock:  # held while generating: two threads never build one kernel twice
            found = _kernels.get(key)
            outcome = "hits" if found is not None else "misses"
            if found is None:
                found = _kernels[key] = (rule.generate(group),)
            _stats[outcome] += 1
        tally[outcome] += 1
        if found[0] is not None:
            return found[0], rule
    return None, None


# -- measuring ------------------------------------------------------------------------------------
def _measure(graph, group: Group, sync: Callable[[], None], to_device):
    """(fused seconds, unfused seconds), None when the unfused nodes cannot run on the device
    (nothing to compare with), or a string saying why the fused kernel cannot be used (it
    failed, or its results differ)."""
    nodes = group.unfused(group.rule.device)
    if nodes is None:
        return None
    samples = getattr(graph, "samples", None) or {}
    arrays = [_known_array(v, samples) for v in group.inputs]
    arrays = [to_device(stand_in(v.shape, v.dtype, v.strides)) if a is None else a
              for a, v in zip(arrays, group.inputs)]

    def unfused():
        return nodes(*arrays)

    expected = unfused()
    try:
        got = group.kernel(*arrays)  # the first call also compiles: not timed
    except Exception as exc:
        return f"the fused kernel failed ({type(exc).__name__}: {exc})"
    summed = {n.out.index for n in group.nodes if n.op.structure is Structure.REDUCTION}
    for out, want, value in zip(got, expected, group.outputs):
        if not _close(_host(out), _host(want), value.dtype, value.index in summed):
            return "fused results differ from the unfused kernels"
    return _best(lambda: group.kernel(*arrays), sync), _best(unfused, sync)


def _known_array(v: Value, samples: dict):
    """The array the graph holds for ``v`` (a sample, a constant, an external tensor's), or
    None."""
    found = samples.get(v.index)
    if found is None and v.source == "const":
        found = v.payload
    elif found is None and v.source == "external":
        found = v.payload._data
    return found


def stand_in(shape: tuple, dtype: np.dtype, strides: tuple | None = None) -> np.ndarray:
    """An input to time a group on in place of a traced one, of its shape, dtype and (when
    given) strides, in bytes: floats in [-2, 2) (both sides of a ReLU, no subnormals), booleans
    half true, integers in [1, 8) (valid divisors and exponents). Seeded: a measurement
    repeats."""
    dtype = np.dtype(dtype)
    if strides is None:
        return _stand_in_values(shape, dtype)
    # the smallest buffer the strided view spans, entered at its element of lowest address
    steps = [s // dtype.itemsize for s in strides]
    low = sum((n - 1) * st for n, st in zip(shape, steps) if st < 0)
    high = sum((n - 1) * st for n, st in zip(shape, steps) if st > 0)
    base = _stand_in_values((high - low + 1,), dtype)
    return np.lib.stride_tricks.as_strided(base[-low:], shape, strides, writeable=False)


def _stand_in_values(shape: tuple, dtype: np.dtype) -> np.ndarray:
    rng = np.random.default_rng(0)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(1, 8, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)).astype(dtype)
    return rng.uniform(-2, 2, shape).astype(dtype)


def _host(array) -> np.ndarray:
    """A NumPy copy of a device array (CuPy's ``get()``), or the array itself on the host."""
    get = getattr(array, "get", None)
    return np.asarray(get() if get is not None and not isinstance(array, np.ndarray) else array)


#: (rtol, atol) by float size: a few ulps of float16, float32, float64. float16 kernels compute
#: in float32 and round each node; NumPy rounds intermediates inside some (gelu, erf) too
_TOLERANCE = {2: (4e-3, 2e-3), 4: (1e-5, 1e-6), 8: (1e-9, 1e-12)}


def _close(got, want, dtype, summed: bool) -> bool:
    """Equal within reassociation; a sum's rounding error scales with the result's magnitude
    (a float64-accumulated sum may differ from NumPy's float32 one where terms cancel)."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if dtype.kind != "f":
        return bool(np.array_equal(got, want))
    rtol, atol = _TOLERANCE[min(dtype.itemsize, 8)]
    finite = want[np.isfinite(want)]
    if summed and finite.size:
        atol = max(atol, rtol * float(np.abs(finite).max()))
    return bool(np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True))


def _best(fn, sync: Callable[[], None], repeats: int = 3) -> float:
    """Seconds per call: the best of ``repeats`` batches, each about a millisecond long and
    ended by ``sync()``."""
    start = time.perf_counter()
    fn()
    sync()
    once = time.perf_counter() - start
    number = max(1, min(100, int(1e-3 / max(once, 1e-7))))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        sync()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


# -- rewriting ------------------------------------------------------------------------------------
def _rewrite(graph, groups: list[Group]) -> None:
    """Put each group where its last member was and drop its other members."""
    last, member = {}, set()
    for group in groups:
        last[id(group.nodes[-1])] = group
        member.update(id(n) for n in group.nodes)
    steps = []
    for step in graph.steps:
        if id(step) in last:
            steps.append(last[id(step)])
        elif id(step) not in member:
            steps.append(step)
    graph.steps[:] = steps
