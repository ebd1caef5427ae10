"""Ops that move, pick or join elements: reshape, permute, indexing, cat/stack, broadcast,
flip, pad and embedding lookups."""

from __future__ import annotations

import numpy as np

from ..graph import END, GraphBuilder
from .call import Call, axes


def reshape(g: GraphBuilder, c: Call) -> None:
    g.add("Reshape", [c.inputs[0], g.shape(c.attrs["shape"])], [c.out])


def permute(g: GraphBuilder, c: Call) -> None:
    g.add("Transpose", [c.inputs[0]], [c.out], perm=axes(c.attrs["dims"], c.rank()))


def broadcast_to(g: GraphBuilder, c: Call) -> None:
    g.add("Expand", [c.inputs[0], g.shape(c.attrs["shape"])], [c.out])


def getitem(g: GraphBuilder, c: Call) -> None:
    """``x[index]`` as Slice (slices), Gather (ints, an index array) and Unsqueeze (None),
    applied left to right."""
    index = c.attrs["index"]
    index = list(index) if isinstance(index, list) else [index]
    arrays = [i for i in index if isinstance(i, dict) and "array" in i]
    if len(arrays) > 1:
        raise c.refuse("indexing with several index arrays", "index with one array at a time")
    taken = sum(1 for i in index if i is not None and i != {"ellipsis": True})
    x, axis = c.inputs[0], 0
    for entry in index:
        if entry == {"ellipsis": True}:
            axis += c.rank() - taken
        elif entry is None:
            x = g.one("Unsqueeze", [x, g.const(np.array([axis], np.int64), "axes")])
            axis += 1
        elif isinstance(entry, dict) and "slice" in entry:
            x = _slice(g, x, axis, *entry["slice"])
            axis += 1
        elif isinstance(entry, int):
            x = g.one("Gather", [x, g.const(np.array(entry, np.int64), "index")], axis=axis)
        elif isinstance(entry, dict) and "array" in entry:
            picks = c.consts_by_id[entry["array"]]
            if picks.dtype == np.bool_:
                raise c.refuse("a boolean mask index", "index with integers")
            x = g.one("Gather", [x, g.const(picks.astype(np.int64), "index")], axis=axis)
            axis += picks.ndim
        else:
            raise c.refuse(f"the index entry {entry!r}", "index with slices and integers")
    g.add("Identity", [x], [c.out])


def _slice(g: GraphBuilder, x: str, axis: int, start, stop, step) -> str:
    step = 1 if step is None else step
    first = (0 if step > 0 else -1) if start is None else start
    last = (END if step > 0 else -END) if stop is None else stop
    return g.one("Slice", [x, g.size(first), g.size(last),
                           g.const(np.array([axis], np.int64), "axes"),
                           g.const(np.array([step], np.int64), "steps")])


def cat(g: GraphBuilder, c: Call) -> None:
    g.add("Concat", c.inputs, [c.out], axis=axes(c.attrs.get("dim", 0), c.rank())[0])


def stack(g: GraphBuilder, c: Call) -> None:
    axis = axes(c.attrs.get("dim", 0), c.rank() + 1)[0]
    where = g.const(np.array([axis], np.int64), "axes")
    g.add("Concat", [g.one("Unsqueeze", [x, where]) for x in c.inputs], [c.out], axis=axis)


def flip(g: GraphBuilder, c: Call) -> None:
    x = c.inputs[0]
    for axis in axes(c.attrs["dims"], c.rank()):
        x = _slice(g, x, axis, None, None, -1)
    g.add("Identity", [x], [c.out])


def pad(g: GraphBuilder, c: Call) -> None:
    """A constant border (fw.export refuses the mirroring modes, which fw-edge does not run)."""
    if c.attrs.get("mode", "constant") != "constant":
        raise c.refuse(f"pad mode {c.attrs['mode']!r}", "pad with a constant")
    widths = c.attrs["pad_width"]
    pads = g.const(np.array([w[0] for w in widths] + [w[1] for w in widths], np.int64), "pads")
    value = g.const(np.array(c.attrs.get("value", 0), c.dtype()), "value")
    g.add("Pad", [c.inputs[0], pads, value], [c.out], mode="constant")


def embedding(g: GraphBuilder, c: Call) -> None:
    g.add("Gather", [c.inputs[1], c.inputs[0]], [c.out], axis=0)


CONVERTERS = {"reshape": reshape, "permute": permute, "broadcast_to": broadcast_to,
              "getitem": getitem, "cat": cat, "stack": stack, "flip": flip, "pad": pad,
              "embedding": embedding}
