"""The typed records plugins return from hooks, and fw_core hands back to them.

One convention everywhere: a ``fw_register_*`` hook returns an iterable of one of these
records. They are plain frozen dataclasses so a plugin author can build, print and compare them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any


class Structure(enum.Enum):
    """The shape of an op's Jacobian; it drives fusion grouping, gradcheck and explanations.

    It holds whether the op is differentiable or not (that is ``OpDef.vjp is None``): ``eq``
    is ELEMENTWISE and ``argmax`` a REDUCTION without a gradient."""

    ELEMENTWISE = "elementwise"  # diagonal: output i depends on input i only
    BROADCAST = "broadcast"  # elementwise after broadcasting inputs to one shape
    INJECTIVE = "injective"  # each output is one input element, moved (reshape, slice, gather)
    REDUCTION = "reduction"  # outputs combine input elements along some axes
    CONTRACTION = "contraction"  # sums of products (matmul, conv)
    OPAQUE = "opaque"  # anything else; no structure assumed
    NONE = "none"  # no function of its tensor inputs (creation, random draws)


@dataclass(frozen=True)
class Anchor:
    """Where an op's local linear approximation holds, and where it breaks.

    Attributes:
        kind: "smooth", "kink", "flat", "saturation", "pole", "domain" or "temperature".
        says: one sentence a user can act on ("gradient is 0 for x < 0: units below 0 stop
            learning").
        region: optional ``fn(*inputs) -> bool Tensor`` marking inputs where the approximation
            breaks (relu's ``x <= 0``); the debugger measures its fraction (dead units, saturation).
        dead: the gradient is exactly 0 throughout ``region``, so inputs that stay there stop
            learning (relu's dead units; not abs, whose region is the single point 0).
    """

    kind: str
    says: str
    region: Callable[..., Any] | None = None
    dead: bool = False


@dataclass(frozen=True)
class TensorSpec:
    """What a meta rule says an output will be, before any kernel runs."""

    shape: tuple[int, ...]
    dtype: Any  # fw_core.dtypes.DType

    def __str__(self) -> str:
        return f"{self.dtype.name}[{', '.join(map(str, self.shape))}]"


@dataclass(frozen=True, eq=False)
class OpDef:
    """An op's contract: what it computes, how shapes and gradients flow, where it breaks.

    Attributes:
        name: the op's unique name ("relu", "matmul").
        family: the group ``fw ops --family`` lists it under ("elementwise", "reduction",
            "shape", "conv", "loss"...; a plugin may name its own). Listings and explanations
            read it; no compiler pass decides anything by it.
        doc: the maths, in one or two sentences.
        signature: the user-facing signature, e.g. ``"relu(x: Tensor) -> Tensor"``.
        meta: ``meta(*input_specs, **attrs) -> TensorSpec``: output shape and dtype from input
            shapes and dtypes; raises fw errors for inputs the op cannot take.
        vjp: ``vjp(ctx, grad) -> tuple[Tensor | None, ...]``, one gradient per tensor input,
            written with fw ops so it runs on every device and can itself be differentiated.
            ``ctx`` offers ``inputs``, ``out``, ``attrs`` and ``input_shapes``. None if the op is
            not differentiable.
        structure: the Jacobian structure (see :class:`Structure`).
        anchor: where the local linear approximation breaks (see :class:`Anchor`).
        saves: which values the VJP reads: a subset of {"inputs", "out"}; only those are kept.
        twice_differentiable: whether the VJP is itself differentiable (double backward).
        float_result: integer and bool inputs are converted to the default float dtype before
            the kernel runs (``exp``, ``div``, ``mean``), as PyTorch does.
        promotion: how the inputs' dtypes are reconciled before the kernel runs: "none" (as
            they are, or as ``float_result`` says) or "binary" (two operands promoted to one
            dtype, a Python scalar taking the tensor's kind as PyTorch's weak scalars do:
            ``add``, ``eq``, ``bitwise_and``).
        effects: positions of the tensor inputs the kernel writes in place (``batch_norm``'s
            running statistics, ``adam_update``'s parameter and moments). The compiler never
            drops, merges, precomputes or reorders such a node, whatever becomes of its output.
        cost: "cheap" when one pass over memory computes it (``add``, ``relu``, ``where``): the
            compiler may recompute its result next to a late reader rather than keep it alive;
            "normal" otherwise (transcendental functions, products, reductions).
        reduction: for an op that sums (or averages) its first input over some dimensions
            (``sum``, ``mean``, ``sum_to``), which ones and what shape results (see
            :class:`Reduction`): such an op may close a pointwise fusion group.
        batched_sum: ``fn(attrs, shapes) -> SumBatching | None``, for an op whose calls, added
            up, equal one call on concatenated inputs (``einsum``, ``sum_to``, the scatter of
            ``index_backward``): ``attrs`` and ``shapes`` (the tensor inputs' shapes) hold one
            entry per call. The compiler rewrites per-step gradient sums of a loop with it.
        expr: for an elementwise op, ``fn(*args, **attrs) -> Expr``: its value at one element
            as a formula of :mod:`fw_core.ops.scalar` (``relu``: ``maximum(x, 0.0)``). Every
            device with a loop generator renders it, so the op fuses there; None: it does not.
    """

    name: str
    family: str
    doc: str
    signature: str
    meta: Callable[..., TensorSpec]
    vjp: Callable[..., tuple] | None
    structure: Structure
    anchor: Anchor
    saves: frozenset[str] = frozenset()
    twice_differentiable: bool = True
    float_result: bool = False
    promotion: str = "none"
    effects: frozenset[int] = frozenset()
    cost: str = "normal"
    reduction: Reduction | None = None
    batched_sum: Callable[[list[dict], list[tuple]], SumBatching | None] | None = None
    expr: Callable[..., Any] | None = None


@dataclass(frozen=True)
class Reduction:
    """How an op sums its first input: what a code generator closing a loop with it needs.

    Attributes:
        mean: the sum is divided by the number of elements summed.
        dims: ``fn(attrs, rank) -> list[bool] | None``: per dimension of an input of ``rank``
            dimensions, whether it is summed (None: these attrs are not understood).
        shape: ``fn(attrs, shape, summed) -> tuple``: the result's shape for an input of
            ``shape`` summed over ``summed`` (``dims``'s answer).
    """

    mean: bool
    dims: Callable[[dict, int], list[bool] | None]
    shape: Callable[[dict, tuple, list[bool]], tuple]


@dataclass(frozen=True)
class SumBatching:
    """A sum of calls of one op, as one call on concatenated inputs.

    Attributes:
        axes: per tensor input, the axis along which the calls' inputs are concatenated.
        order: the calls in the order their inputs are concatenated.
        call: False when the concatenation is the sum itself (the calls fill disjoint
            slices), so no call of the op remains.
    """

    axes: tuple[int, ...]
    order: tuple[int, ...]
    call: bool = True


@dataclass(frozen=True)
class DeviceSpec:
    """A device a plugin provides.

    Attributes:
        name: device type ("cpu", "cuda"); tensors say ``device="cuda:1"`` for index 1.
        xp: the device's array namespace (``numpy``, ``cupy``): kernels written once against
            ``xp`` run on every device whose namespace follows the NumPy API.
        array_type: the raw array class of the device (``numpy.ndarray``).
        from_numpy: ``fn(array: numpy.ndarray, index: int) -> device array``.
        to_numpy: ``fn(device_array) -> numpy.ndarray``.
        unavailable_reason: ``fn() -> str | None``: None when usable, else why not
            (no driver, no device); called once per load, when first needed (a device of
            this type asked for, ``fw.available_devices()``, ``fw plugins``), so a probe that
            imports a driver library costs ``import fw_core`` nothing.
        synchronize: ``fn(index) -> None``: wait for queued work (no-op on synchronous devices).
        count: ``fn() -> int``: how many devices of this type exist.
        description: one line for ``fw plugins``.
        stage: ``fn(array: numpy.ndarray, index) -> ready`` or None: start copying a host array
            to the device without waiting for it; ``ready()`` returns the device array once
            work queued after the call may read it. The DataLoader starts batch k+1's copies
            before handing out batch k, so an asynchronous copy (pinned buffer, copy stream)
            overlaps the loop's compute. None: copies go through ``from_numpy`` at once.
        allocator_usage: ``fn(index) -> (used_bytes, reserved_bytes)`` or None: what the
            device's own allocator holds (live arrays; live + cached). fw's memory report then
            counts the bytes it does not track (kernel results, activations) as "temporary",
            and pressure is judged on the reserved bytes.
        release_cached: ``fn(index) -> int`` or None: give the allocator's cached free blocks
            back to the driver; the pool's pressure response calls it after dropping its own.
        namespace: ``fn() -> (xp, array_type)`` or None: for an array library that is costly
            to import (CuPy), called when the first device of this type is made, in place of
            ``xp`` and ``array_type`` (pass None for both).
        properties: ``fn(index) -> dict`` or None: what device ``index`` is, with the keys
            ``name`` (str), ``total_memory`` (bytes), ``major`` and ``minor`` (compute
            capability) and ``multi_processor_count``; ``fw.cuda.get_device_properties``
            answers from it.
    """

    name: str
    xp: Any
    array_type: type
    from_numpy: Callable[[Any, int], Any]
    to_numpy: Callable[[Any], Any]
    unavailable_reason: Callable[[], str | None] = lambda: None
    synchronize: Callable[[int], None] = lambda index: None
    count: Callable[[], int] = lambda: 1
    description: str = ""
    stage: Callable[[Any, int], Callable[[], Any]] | None = None
    allocator_usage: Callable[[int], tuple[int, int]] | None = None
    release_cached: Callable[[int], int] | None = None
    namespace: Callable[[], tuple[Any, type]] | None = None
    properties: Callable[[int], dict] | None = None


@dataclass(frozen=True)
class KernelSpec:
    """A kernel: the raw-array implementation of one op on one device.

    ``fn`` takes the op's input arrays positionally and its attributes as keywords, and returns a
    raw array of the device. It knows nothing of Tensor or autograd.

    Attributes:
        op: the op's name.
        device: the device type it runs on.
        fn: the kernel, or a :class:`LazyKernel` naming it (imported when the first device
            of its type is made).
        dtypes: names of the dtypes it handles (None: all the op accepts). Other dtypes raise
            a DTypeError naming the kernel's plugin.
        priority: when two plugins register the same (op, device), the higher priority wins;
            at equal priority the plugin providing the device wins (else the first in load
            order), and the other kernel is refused with a note naming both.
        guard: for a kernel that takes only some calls (a library that needs contiguous
            float32, say): called with the same arguments as ``fn`` before it, returns whether
            ``fn`` takes this call; when it does not (a false value), the kernel of the next
            lower priority runs instead. A guard may return, instead of True, the function that
            runs this call with ``fn``'s arguments (a kernel bound to the cached primitive the
            guard looked up, say), which then runs in place of ``fn``. It must be cheap and must
            not raise for valid inputs. A :class:`LazyKernel` may name it, as ``fn``.
        takes: what the guard accepts, in words ("float32, C-contiguous, 2-d"): what
            ``fw.plugins.dispatch_table()`` and ``fw plugins --verbose`` say.
    """

    op: str
    device: str
    fn: Callable
    dtypes: frozenset[str] | None = None
    priority: int = 0
    guard: Callable[..., bool | Callable] | LazyKernel | None = None
    takes: str = ""


@dataclass(frozen=True)
class LazyKernel:
    """A kernel named at load and imported when the first device of its type is made (the first
    tensor there): ``KernelSpec(op, "cuda", fn=LazyKernel("fw_cuda.kernels:cuda_kernels", op))``.

    ``table`` is ``"module:function"``, a function returning {op name: kernel}; it is called once
    per process, and ``op`` is the key of this kernel in what it returns. The device's dispatch
    table then holds the kernel itself, so a call costs what it would have cost eagerly. For a
    plugin whose kernels import a costly library (fw_cuda's need CuPy): ``fw plugins`` and the
    dispatch table list them, and nothing is imported on a machine that never uses the device.
    """

    table: str
    op: str


@dataclass(frozen=True)
class FusionRule:
    """A way to fuse a pattern of ops on a device into one generated kernel.

    Attributes:
        name: unique rule name ("elementwise_chain").
        device: the device type whose code generator this is.
        structures: the Jacobian structures it fuses (the grouping fw_core does is by structure).
        generate: ``fn(group) -> callable | None``: build a kernel for a group of graph nodes
            (``kernel(*input_arrays, out=None) -> tuple of output arrays``), or None when the
            rule cannot handle this group (the next rule is asked, else the nodes stay unfused).
        priority: higher rules are tried first.
        supports: optional ``fn(node) -> bool``: whether the generator can take this node.
            The grouping pass only puts a node in a group if some rule supports it, so groups
            stay within what a generator handles; None means every node of ``structures``.
        chains: whether the rule fuses *chains* (group structure ``"chain"``) rather than
            the structure groups: runs of nodes it supports, each reading the result of the
            member before it as its first input, whatever their structures (a convolution,
            its activation and a pooling, kept in a library's own layout between them). The
            pass forms chains first; nodes of a chain no rule takes are grouped by structure.
    """

    name: str
    device: str
    structures: frozenset[Structure]
    generate: Callable[[Any], Callable | None]
    priority: int = 0
    supports: Callable[[Any], bool] | None = None
    chains: bool = False


@dataclass(frozen=True)
class MemoryPolicy:
    """How a device's memory pool recycles and releases buffers.

    Attributes:
        name: policy name ("default", "low_memory").
        device: the device type it applies to.
        size_classes: allocation sizes in bytes the pool rounds up to (sorted).
        release_order: lifecycle tags in the order they are released under pressure
            (debug captures first).
        limit_bytes: pressure threshold, None for no limit.
    """

    name: str
    device: str
    size_classes: tuple[int, ...] = ()
    release_order: tuple[str, ...] = ("debug", "cache", "temporary")
    limit_bytes: int | None = None


@dataclass(frozen=True)
class OpEvent:
    """What an inspector sees of one op run (only built when an inspector is active).

    Attributes:
        op: the op that ran.
        inputs: its inputs; for a ``"backward"`` event, the incoming gradient.
        output: its result; for a ``"backward"`` event, the gradients of the node's inputs.
        module: dotted path of the module whose forward ran it (or recorded the node).
        phase: ``"forward"`` (an op ran) or ``"backward"`` (a node's gradient rule finished).
        attrs: the op's attributes.
        node: the autograd node: the one recorded for the output (None when none was), or the
            one whose gradient rule a ``"backward"`` event reports.
        in_vjp: the op ran inside a gradient rule (its ``"backward"`` event follows).
        in_backward: the op ran during a backward pass (a gradient rule's op, a gradient sum).
    """

    op: OpDef
    inputs: tuple
    output: Any
    module: str
    phase: str
    attrs: dict = field(default_factory=dict)
    node: Any = None
    in_vjp: bool = False
    in_backward: bool = False


@dataclass(frozen=True)
class Inspector:
    """An observer of execution. Registered at load, called only while active.

    Attributes:
        name: unique name ("fw_debugger.anomaly").
        on_op: ``fn(event: OpEvent) -> None``, after every op run (forward and backward).
        on_backward: ``fn(roots: list) -> None``, when a backward pass starts.
        active: whether it is called from the start; tools usually switch it on in a context
            (``fw.inspectors.activate(name)``).
    """

    name: str
    on_op: Callable[[OpEvent], None] | None = None
    on_backward: Callable[[list], None] | None = None
    active: bool = False


@dataclass(frozen=True)
class ThreadPool:
    """A pool of worker threads a plugin's libraries compute with (OpenBLAS, OpenMP, Numba).

    Attributes:
        name: unique name ("openblas", "onednn-openmp").
        get: ``fn() -> int``, the threads it uses now.
        set: ``fn(n: int) -> None``, use ``n`` threads from now on.
        spins: whether its idle threads busy-wait for work (OpenMP's and OpenBLAS's do). Two
            such pools taking turns on the same cores slow each other down many times over,
            so fw keeps only the one of highest ``priority`` at full strength and holds the
            others to one thread (``fw.threads.pools()`` says which and why).
        priority: which spinning pool keeps the cores (the one doing the heavy work).
    """

    name: str
    get: Callable[[], int]
    set: Callable[[int], None]
    spins: bool = False
    priority: int = 0


@dataclass(frozen=True)
class KernelCache:
    """A cache a plugin keeps of built kernels or library primitives, reported by
    ``fw.compile.explain()`` and ``fw.plugins.kernel_caches()``.

    Attributes:
        name: unique name ("onednn.primitives").
        info: ``fn() -> dict``: its counters now, at least ``hits``, ``misses`` and ``size``;
            ``evictions`` and ``capacity`` where it is bounded; anything else it counts.
    """

    name: str
    info: Callable[[], dict]


@dataclass(frozen=True)
class PluginConfig:
    """What ``fw_configure`` receives once every plugin has registered."""

    plugins: tuple[str, ...]
    devices: tuple[str, ...]
    ops: tuple[str, ...]


Records = Iterable  # hooks return Iterable[<record>]
