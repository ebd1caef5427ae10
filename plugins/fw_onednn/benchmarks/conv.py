"""fw_onednn's convolutions and pools against fw_cpu and PyTorch at the cnn workload's shapes,
and the layout choices behind them, measured in one run.

    python plugins/fw_onednn/benchmarks/conv.py [--threads 2] [--rounds 7]

1. Milliseconds per call of each convolution and pooling op a cnn training step (batch 64) and
   an inference (batch 1) run (``benchmarks/workloads/cnn.py``): fw_onednn as fw's dispatch
   calls it (guard + kernel), fw_cpu's kernel as fw runs it without fw_onednn, and the same
   call in PyTorch, taking turns in each round. ``max_pool2d_backward`` stays with fw_cpu
   (fw_onednn does not serve it); its time is there for the step's sum.
2. Layouts of a convolution: fw_onednn's program (oneDNN's blocked layouts, reorders per call)
   against one oneDNN convolution on the plain layouts (no reorders, oneDNN's im2col + GEMM),
   and what each reorder of the program costs alone, the weights' included (the case for
   reordering them per call rather than caching them per parameter version).
3. Layouts of a pooling: on plain (N, C, H, W) as fw_onednn runs it, against oneDNN's blocked
   layout with the two reorders it needs; and the check for NaN and -inf the max guards make.

Each timing repeats a call for ~20 ms; figures are medians of the rounds. The machine is
shared: compare only figures of one run.
"""

from __future__ import annotations

import ctypes

import numpy as np
from timing import in_turns, start

#: name -> (fw op, operand shapes, attributes): the cnn workload's convolutions and pools
CONV = {"stride": (1, 1), "padding": ((1, 1), (1, 1)), "dilation": (1, 1), "groups": 1}
POOL = {"kernel_size": (2, 2), "stride": (2, 2), "padding": (0, 0), "dilation": (1, 1),
        "ceil_mode": False}


def _calls(batch: int) -> dict:
    one, two = (batch, 16, 28, 28), (batch, 32, 14, 14)
    calls = {
        "conv1 forward": ("conv2d", [(batch, 1, 28, 28), (16, 1, 3, 3), (16,)], CONV),
        "conv2 forward": ("conv2d", [(batch, 16, 14, 14), (32, 16, 3, 3), (32,)], CONV),
        "pool1 forward": ("max_pool2d", [one], POOL),
        "pool2 forward": ("max_pool2d", [two], POOL),
    }
    if batch > 1:  # a training step's backward ops
        calls.update({
            "conv2 grad input": ("conv_transpose2d", [two, (32, 16, 3, 3)],
                                 {**CONV, "output_padding": (0, 0)}),
            "conv1 grad weight": ("conv2d_weight_grad", [(batch, 1, 28, 28), one],
                                  {**CONV, "kernel_size": (3, 3)}),
            "conv2 grad weight": ("conv2d_weight_grad", [(batch, 16, 14, 14), two],
                                  {**CONV, "kernel_size": (3, 3)}),
            "pool1 indices": ("max_pool2d_indices", [one], POOL),
            "pool2 indices": ("max_pool2d_indices", [two], POOL),
            "pool1 backward (fw_cpu's)": ("max_pool2d_backward", [(batch, 16, 14, 14), "idx"],
                                          {"input_size": (28, 28)}),
        })
    return calls


def _torch_call(torch, op, attrs):
    """The PyTorch call of an fw op on tensors."""
    F = torch.nn.functional
    if op == "conv2d":
        return lambda x, w, b: F.conv2d(x, w, b, padding=1)
    if op == "conv_transpose2d":
        return lambda g, w: F.conv_transpose2d(g, w, padding=1)
    if op == "conv2d_weight_grad":
        return lambda x, g: torch.nn.grad.conv2d_weight(x, (g.shape[1], x.shape[1], 3, 3), g,
                                                        padding=1)
    if op == "max_pool2d_indices":
        return lambda x: F.max_pool2d(x, 2, return_indices=True)[1]
    if op == "max_pool2d_backward":
        return lambda g, i: F.max_unpool2d(g, i, 2, output_size=(28, 28))
    return lambda x: F.max_pool2d(x, 2)


def _operands(rng, shapes):
    arrays = []
    for shape in shapes:
        if shape == "idx":  # a 2x2 max pooling's indices into (28, 28) planes
            g = arrays[0]
            rows = 2 * np.arange(g.shape[-2])[:, None] + rng.integers(0, 2, g.shape)
            cols = 2 * np.arange(g.shape[-1]) + rng.integers(0, 2, g.shape)
            arrays.append(rows * 28 + cols)
        else:
            arrays.append(rng.standard_normal(shape).astype(np.float32))
    return arrays


def per_op(fw, torch, cpu, rounds: int) -> None:
    """Section 1: ms per call of the cnn's convolution and pooling ops."""
    rng = np.random.default_rng(0)
    print("\n## ms per call at the cnn workload's shapes (medians; x: how many times faster "
          "fw_onednn is)")
    print(f"{'call':34} {'fw_onednn':>9} {'fw_cpu':>8} {'torch':>8} {'x fw_cpu':>9} "
          f"{'x torch':>8}")
    for batch in (64, 1):
        for name, (op, shapes, attrs) in _calls(batch).items():
            arrays = _operands(rng, shapes)
            tensors = [torch.from_numpy(a) for a in arrays]
            chain = fw.ops.registry.kernel(op, "cpu")
            ms = {k: v * 1e3 for k, v in in_turns({
                "onednn": (lambda *a, c=chain, k=attrs: c(*a, **k), arrays),
                "fw_cpu": (lambda *a, f=cpu[op], k=attrs: f(*a, **k), arrays),
                "torch": (_torch_call(torch, op, attrs), tensors)}, rounds).items()}
            print(f"{f'{name}, batch {batch}':34} {ms['onednn']:9.3f} {ms['fw_cpu']:8.3f} "
                  f"{ms['torch']:8.3f} {ms['fw_cpu'] / ms['onednn']:9.2f} "
                  f"{ms['torch'] / ms['onednn']:8.2f}")


def _one_step(primitive: int, args: list, shape) -> object:
    """A Program running one oneDNN primitive on ``args`` ((DNNL_ARG_*, memory, operand))."""
    from fw_onednn.program import Program

    table = np.array([(arg, memory) for arg, memory, _ in args], np.uint64)
    bindings = [(memory, operand, 0) for _, memory, operand in args]
    return Program("benchmark", shape, (), 0, bindings, [(primitive, table)],
                   [memory for _, memory, _ in args])


def _memory(md) -> int:
    from fw_onednn import capi
    from fw_onednn.runtime import ENGINE

    memory = capi.handle()
    capi.check(capi.memory_create(ctypes.byref(memory), md, ENGINE, None), None, "memory")
    return memory.value


def _primitive(pd) -> int:
    from fw_onednn import capi

    primitive = capi.handle()
    capi.check(capi.primitive_create(ctypes.byref(primitive), pd), None, "primitive")
    return primitive.value


def _reorder(given, wanted, shape):
    """A Program reordering an array of layout ``given`` into ``wanted``, and the bytes of
    ``wanted``."""
    from fw_onednn import capi, capi_conv
    from fw_onednn.runtime import ENGINE

    pd = capi.handle()
    capi.check(capi_conv.reorder_primitive_desc_create(ctypes.byref(pd), given, ENGINE, wanted,
                                                       ENGINE, None), None, "reorder")
    try:
        primitive = _primitive(pd)
    finally:
        capi.primitive_desc_destroy(pd)
    program = _one_step(primitive, [(capi_conv.ARG_FROM, _memory(given), 0),
                                    (capi_conv.ARG_TO, _memory(wanted), 1)], shape)
    return program, capi_conv.memory_desc_get_size(wanted)


def conv_layouts(rounds: int) -> None:
    """Section 2: blocked layouts with reorders against oneDNN's plain-layout convolution, and
    the reorders' share."""
    from fw_onednn import capi, capi_conv, conv
    from fw_onednn.layouts import contiguous
    from fw_onednn.program import Builder

    rng = np.random.default_rng(1)
    print("\n## A convolution's layouts (ms per call, medians): fw_onednn's program (blocked, "
          "reorders per call) against oneDNN on plain layouts; each reorder alone")
    print(f"{'shape':34} {'program':>8} {'plain':>8} {'x plain':>8} {'src':>7} {'weights':>8} "
          f"{'dst':>7}  impl (blocked / plain)")
    shapes = [((64, 1, 28, 28), (16, 1, 3, 3)), ((64, 16, 14, 14), (32, 16, 3, 3)),
              ((1, 1, 28, 28), (16, 1, 3, 3)), ((1, 16, 14, 14), (32, 16, 3, 3)),
              ((32, 64, 28, 28), (64, 64, 3, 3)), ((8, 256, 14, 14), (256, 256, 3, 3))]
    for x_shape, w_shape in shapes:
        x, w, bias = (rng.standard_normal(s).astype(np.float32) for s in
                      (x_shape, w_shape, w_shape[:1]))
        assert conv.takes_conv2d(x, w, bias, **CONV)
        program = conv._found.entry
        out = np.empty(program.out_shape, np.float32)
        plan = conv._forward_plan(x_shape, w_shape, w_shape[:1], **CONV)
        with Builder() as b:
            given = [b.plain(d, contiguous(d)) for d in (x_shape, w_shape, plan.dst)]
            bias_md = b.plain(w_shape[:1], (1,))
            pd = b.primitive_desc(capi_conv.convolution_forward_primitive_desc_create,
                                  capi_conv.FORWARD_TRAINING, capi_conv.CONVOLUTION_DIRECT,
                                  given[0], given[1], bias_md, given[2], *plan.steps(), None)
            plain_impl = b.impl
            plain = _one_step(_primitive(pd), [
                (capi.ARG_SRC, _memory(given[0]), 0), (capi.ARG_WEIGHTS, _memory(given[1]), 1),
                (capi.ARG_BIAS, _memory(bias_md), 2), (capi.ARG_DST, _memory(given[2]), 3)],
                plan.dst)
            chosen = [b.chosen(d) for d in (x_shape, w_shape, plan.dst)]
            blocked = b.primitive_desc(capi_conv.convolution_forward_primitive_desc_create,
                                       capi_conv.FORWARD_TRAINING, capi_conv.CONVOLUTION_DIRECT,
                                       chosen[0], chosen[1], bias_md, chosen[2], *plan.steps(),
                                       None)
            queries = (capi_conv.QUERY_SRC_MD, capi_conv.QUERY_WEIGHTS_MD,
                       capi_conv.QUERY_DST_MD)
            wanted = [capi_conv.primitive_desc_query_md(blocked, q, 0) for q in queries]
            candidates = {"program": (program, (x, w, bias, out)),
                          "plain": (plain, (x, w, bias, out))}
            for name, source, target, array in (("src", given[0], wanted[0], x),
                                                ("weights", given[1], wanted[1], w),
                                                ("dst", wanted[2], given[2], out)):
                if capi_conv.memory_desc_equal(source, target):
                    continue
                step, size = _reorder(source, target, array.shape)
                candidates[name] = (step, (array, np.empty(size, np.uint8)))
            ms = {k: v * 1e3 for k, v in in_turns(candidates, rounds).items()}
        share = ms.get("weights", 0) / ms["program"]
        print(f"{f'{x_shape} * {w_shape[:2]}':34} {ms['program']:8.3f} {ms['plain']:8.3f} "
              f"{ms['plain'] / ms['program']:8.2f} {ms.get('src', 0):7.3f} "
              f"{ms.get('weights', 0):8.3f} {ms.get('dst', 0):7.3f} ({share:.1%})  "
              f"{program.impl} / {plain_impl}")
    print("src, weights, dst: each reorder alone (0: none needed); the weights' share of the "
          "program is what caching them per parameter version would save")


BLOCKED_16 = 78  # dnnl_aBcd16b: channels in blocks of 16 (AVX-512's)


def pool_layouts(rounds: int) -> None:
    """Section 3: max pooling on plain layouts against blocked ones plus their reorders, and
    the guards' check for NaN and -inf."""
    from fw_onednn import capi, capi_conv, pooling
    from fw_onednn.layouts import contiguous
    from fw_onednn.program import Builder

    rng = np.random.default_rng(2)
    print("\n## A max pooling's layouts (ms per call, medians): plain as fw_onednn runs it, "
          "blocked with its two reorders, and the guards' check (x.min() > -inf)")
    print(f"{'input':22} {'plain':>7} {'blocked':>8} {'reorders':>9} {'check':>8} "
          f"{'check/plain':>11}")
    for shape in ((64, 16, 28, 28), (64, 32, 14, 14)):
        x = rng.standard_normal(shape).astype(np.float32)
        assert pooling.takes_max_pool2d(x, **POOL)
        program = pooling._found.entry
        out = np.empty(program.out_shape, np.float32)
        dst = program.out_shape
        blocked_md = capi.handle()
        capi.check(capi_conv.memory_desc_create_with_tag(
            ctypes.byref(blocked_md), 4, capi.Dims(*shape), capi.F32, BLOCKED_16), None,
            "blocked md")
        with Builder() as b:
            given = b.plain(shape, contiguous(shape))
            pd = b.primitive_desc(capi_conv.pooling_forward_primitive_desc_create,
                                  capi_conv.FORWARD_INFERENCE, capi_conv.POOLING_MAX,
                                  blocked_md, b.chosen(dst), *pooling._steps(
                                      (2, 2), (2, 2), (0, 0), (1, 1), (0, 0)), None)
            produced = capi_conv.primitive_desc_query_md(pd, capi_conv.QUERY_DST_MD, 0)
            src_bytes = capi_conv.memory_desc_get_size(blocked_md)
            dst_bytes = capi_conv.memory_desc_get_size(produced)
            blocked = _one_step(_primitive(pd), [(capi.ARG_SRC, _memory(blocked_md), 0),
                                                 (capi.ARG_DST, _memory(produced), 1)], dst)
            into, _ = _reorder(given, blocked_md, shape)
            back, _ = _reorder(produced, b.plain(dst, contiguous(dst)), dst)
            src_copy, dst_copy = np.empty(src_bytes, np.uint8), np.empty(dst_bytes, np.uint8)
            ms = {k: v * 1e3 for k, v in in_turns({
                "plain": (program, (x, out)), "blocked": (blocked, (src_copy, dst_copy)),
                "into": (into, (x, src_copy)), "back": (back, (dst_copy, out)),
                "check": (pooling._no_nan_or_minus_infinity, (x,))}, rounds).items()}
        capi.memory_desc_destroy(blocked_md)
        print(f"{str(shape):22} {ms['plain']:7.3f} {ms['blocked']:8.3f} "
              f"{ms['into'] + ms['back']:9.3f} {ms['check']:8.3f} "
              f"{ms['check'] / ms['plain']:11.2f}")


def main() -> None:
    args, fw, torch = start(__doc__, "fw_onednn convolution and pooling")
    from fw_cpu import plugin as fw_cpu_plugin

    cpu = {spec.op: spec.fn for spec in fw_cpu_plugin.fw_register_kernels()}
    per_op(fw, torch, cpu, args.rounds)
    conv_layouts(args.rounds)
    pool_layouts(args.rounds)


if __name__ == "__main__":
    main()
