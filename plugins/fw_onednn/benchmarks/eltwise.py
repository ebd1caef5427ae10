"""fw_onednn's eltwise, softmax and normalisation kernels and its post-op fusion against fw_cpu
and PyTorch, measured in one run.

    python plugins/fw_onednn/benchmarks/eltwise.py [--threads 2] [--rounds 7]

1. Where oneDNN starts to win: for each eltwise op fw_onednn serves, fw_cpu's kernel time over
   fw_onednn's (guard + kernel, every size sent to oneDNN) for flat float32 arrays of 2**8 to
   2**20 elements; above 1 oneDNN is faster. Then the cut-off that data implies (the smallest
   size from which oneDNN wins at every larger one) beside the one the guard uses.
2. Milliseconds per call at the workloads' shapes (``benchmarks/workloads/``: mlp, cnn,
   transformer, lstm_cell), plus a (128, 512) batch_norm: fw_onednn as fw's dispatch calls it,
   fw_cpu's kernel as fw runs it without fw_onednn, and PyTorch, taking turns in each round.
3. Fused products (inference, no autograd): the kernel ``onednn.post_ops`` generates for
   linear + bias + GELU (transformer FFN, mlp fc1 with ReLU) and linear + bias + residual add
   (transformer), against the same nodes unfused through fw's kernels (fw_onednn's linear and
   eltwise), fw_cpu alone (NumPy GEMM, its Numba or NumPy eltwise), and PyTorch.

Each timing repeats a call for ~20 ms and takes the best of the rounds: on a shared machine
another process only ever adds time, and oneDNN's (and PyTorch's) OpenMP threads, which wait for
each other at the end of every call, lose milliseconds whenever one of them is descheduled.
Compare only figures of one run.
"""

from __future__ import annotations

import numpy as np
from timing import in_turns, start

#: section 1: (fw op, attributes, input transform)
ELTWISE = [("relu", {}, None), ("leaky_relu", {"negative_slope": 0.01}, None),
           ("elu", {"alpha": 1.0}, None), ("gelu", {"approximate": "none"}, None),
           ("gelu", {"approximate": "tanh"}, None), ("sigmoid", {}, None), ("silu", {}, None),
           ("mish", {}, None), ("sqrt", {}, np.abs),
           # not served (see fw_onednn/eltwise.py): measured for the record
           ("tanh", {}, None), ("abs", {}, None), ("square", {}, None), ("exp", {}, None)]
SIZES = [1 << k for k in range(8, 21)]


def _draw(rng, shape, transform=None):
    x = rng.standard_normal(shape).astype(np.float32)
    return transform(x) if transform else x


def _onednn_eltwise(op):
    """fw_onednn's guard + kernel for ``op`` as fw's chain runs it, for ops it serves; for the
    others oneDNN's algorithm for it as a plain eltwise primitive."""
    from fw_onednn import eltwise

    kernel = eltwise.BY_OP.get(op)
    if kernel is not None:
        def run(x, **attrs):
            assert kernel.takes(x, **attrs)
            return kernel(x, **attrs)

        return run
    from fw_onednn import capi_eltwise

    alg = {"tanh": capi_eltwise.ELTWISE_TANH, "abs": capi_eltwise.ELTWISE_ABS,
           "square": capi_eltwise.ELTWISE_SQUARE, "exp": capi_eltwise.ELTWISE_EXP}[op]
    primitives = {}

    def run(x, **attrs):
        p = primitives.get(x.size)
        if p is None:
            p = primitives[x.size] = eltwise.eltwise_primitive(eltwise.Algorithm(alg), x.size)
        out = np.empty(x.shape, np.float32)
        p.run(p.handles, x, out)
        return out

    return run


def crossover(cpu, rounds: int) -> None:
    """Section 1."""
    import fw_onednn
    from fw_onednn import sizes

    rng = np.random.default_rng(0)
    print(f"\n## fw_cpu time / fw_onednn time by elements (best of {rounds}; above 1: oneDNN "
          "faster)")
    print(f"{'op':22}" + "".join(f"{n:>8}" for n in SIZES) + f"{'implied':>9}{'guard':>8}")
    fw_onednn.set_min_elements(0)
    try:
        for op, attrs, transform in ELTWISE:
            ours = _onednn_eltwise(op)
            ratios = []
            for n in SIZES:
                x = _draw(rng, (n,), transform)
                t = in_turns({"onednn": (lambda x: ours(x, **attrs), (x,)),
                              "cpu": (lambda x: cpu[op](x, **attrs), (x,))}, rounds, min)
                ratios.append(t["cpu"] / t["onednn"])
            wins = [n for k, n in enumerate(SIZES) if all(r > 1 for r in ratios[k:])]
            name = op + "".join(f" {v}" for v in attrs.values() if v not in ("none",))
            guard = sizes._DEFAULTS.get(op)
            print(f"{name:22}" + "".join(f"{r:8.2f}" for r in ratios) +
                  f"{wins[0] if wins else '-':>9}{guard if guard is not None else 'unserved':>8}")
    finally:
        fw_onednn.set_min_elements(None)


def _workload_calls(rng):
    """name -> (fw op, arrays, attributes, torch function)."""
    import torch

    F = torch.nn.functional
    ln = (rng.standard_normal(128).astype(np.float32), rng.standard_normal(128).astype(np.float32))
    bn = [rng.standard_normal(512).astype(np.float32) for _ in range(3)] + \
        [(rng.random(512) + 0.5).astype(np.float32)]
    causal = np.triu(np.full((64, 64), -np.inf, np.float32), 1)
    scores = _draw(rng, (16, 4, 64, 64)) + causal
    norm = {"normalized_shape": (128,), "eps": 1e-5, "has_weight": True, "has_bias": True}
    bn_train = {"training": True, "momentum": 0.1, "eps": 1e-5, "has_running": True,
                "has_weight": True, "has_bias": True}
    return {
        "mlp relu (128, 512)": ("relu", [_draw(rng, (128, 512))], {}, torch.relu),
        "mlp relu (128, 256)": ("relu", [_draw(rng, (128, 256))], {}, torch.relu),
        "cnn relu (64, 16, 28, 28)": ("relu", [_draw(rng, (64, 16, 28, 28))], {}, torch.relu),
        "cnn relu (64, 32, 14, 14)": ("relu", [_draw(rng, (64, 32, 14, 14))], {}, torch.relu),
        "transformer gelu (16, 64, 512)": ("gelu", [_draw(rng, (16, 64, 512))],
                                           {"approximate": "none"}, F.gelu),
        "lstm_cell sigmoid (32, 128)": ("sigmoid", [_draw(rng, (32, 128))], {}, torch.sigmoid),
        "attention softmax (16, 4, 64, 64) causal": ("softmax", [scores], {"dim": -1},
                                                     lambda t, dim: torch.softmax(t, dim)),
        "transformer logits softmax (1024, 1000)": (
            "softmax", [_draw(rng, (1024, 1000))], {"dim": -1},
            lambda t, dim: torch.softmax(t, dim)),
        "log_softmax (1024, 1000)": ("log_softmax", [_draw(rng, (1024, 1000))], {"dim": -1},
                                     lambda t, dim: torch.log_softmax(t, dim)),
        "transformer layer_norm (16, 64, 128)": (
            "layer_norm", [_draw(rng, (16, 64, 128)), *ln], norm,
            lambda t, w, b, **a: F.layer_norm(t, (128,), w, b)),
        "batch_norm training (128, 512)": (
            "batch_norm", [_draw(rng, (128, 512)), bn[2], bn[3], bn[0], bn[1]], bn_train,
            lambda t, m, v, w, b, **a: F.batch_norm(t, m, v, w, b, training=True)),
        "batch_norm eval (128, 512)": (
            "batch_norm", [_draw(rng, (128, 512)), bn[2], bn[3], bn[0], bn[1]],
            {**bn_train, "training": False},
            lambda t, m, v, w, b, **a: F.batch_norm(t, m, v, w, b, training=False)),
    }


def workloads(fw, torch, cpu, rounds: int) -> None:
    """Section 2."""
    rng = np.random.default_rng(1)
    print(f"\n## ms per call at the workloads' shapes (best of {rounds})")
    print(f"{'call':44} {'fw_onednn':>9} {'fw_cpu':>8} {'torch':>8} {'cpu/onednn':>10} "
          f"{'torch/onednn':>12}")
    for name, (op, arrays, attrs, theirs) in _workload_calls(rng).items():
        chain = fw.ops.kernel(op, "cpu")
        tensors = [torch.from_numpy(a.copy()) for a in arrays]
        t = in_turns({"onednn": (lambda *a: chain(*a, **attrs), arrays),
                      "cpu": (lambda *a: cpu[op](*a, **attrs), arrays),
                      "torch": (lambda *a: theirs(*a, **attrs), tensors)}, rounds, min)
        owner, _ = fw.plugins.serving(op, "cpu", tuple(arrays), attrs)
        mark = "" if owner == "fw_onednn" else f" ({owner})"
        print(f"{name + mark:44} {t['onednn'] * 1e3:9.3f} {t['cpu'] * 1e3:8.3f} "
              f"{t['torch'] * 1e3:8.3f} {t['cpu'] / t['onednn']:10.2f} "
              f"{t['torch'] / t['onednn']:12.2f}")


def _fused(fw, fn, arrays):
    """The kernel fw's fusion pass chose for ``fn`` on these arrays (inference), and the rule
    that generated it."""
    fw.scheduler.configure(compile_after=0, fusion="always")
    compiled = fw.compile(fn)
    tensors = [fw.from_numpy(a) for a in arrays]
    with fw.no_grad():
        compiled(*tensors)
    [group] = [s for p in compiled.plans() for s in p.graph.steps
               if s.__class__.__name__ == "Group"]
    fw.scheduler.reset()
    return group.kernel, group.rule.name


def fused(fw, torch, cpu, rounds: int) -> None:
    """Section 3."""
    F = torch.nn.functional
    rng = np.random.default_rng(2)
    cases = {
        "transformer ffn linear+bias+gelu (16,64,128)->512": (
            lambda x, w, b: fw.gelu(fw.linear(x, w, b)),
            [_draw(rng, (16, 64, 128)), _draw(rng, (512, 128)) * 0.1, _draw(rng, (512,))],
            lambda x, w, b: F.gelu(F.linear(x, w, b)),
            lambda x, w, b: cpu["gelu"](cpu["linear"](x, w, b), approximate="none")),
        "mlp fc1 linear+bias+relu 128x784->512": (
            lambda x, w, b: fw.relu(fw.linear(x, w, b)),
            [_draw(rng, (128, 784)), _draw(rng, (512, 784)) * 0.05, _draw(rng, (512,))],
            lambda x, w, b: F.relu(F.linear(x, w, b)),
            lambda x, w, b: cpu["relu"](cpu["linear"](x, w, b))),
        "transformer ffn linear+bias+residual (16,64,512)->128": (
            lambda h, w, b, r: r + fw.linear(h, w, b),
            [_draw(rng, (16, 64, 512)), _draw(rng, (128, 512)) * 0.05, _draw(rng, (128,)),
             _draw(rng, (16, 64, 128))],
            lambda h, w, b, r: r + F.linear(h, w, b),
            lambda h, w, b, r: cpu["add"](r, cpu["linear"](h, w, b))),
    }
    print(f"\n## ms per call, fused products (best of {rounds})")
    print(f"{'group':52} {'fused':>7} {'unfused':>8} {'fw_cpu':>7} {'torch':>7} "
          f"{'unfused/fused':>13} {'fw_cpu/fused':>12} {'torch/fused':>11}")
    for name, (fn, arrays, theirs, alone) in cases.items():
        kernel, rule = _fused(fw, fn, arrays)
        tensors = [torch.from_numpy(a.copy()) for a in arrays]
        t = in_turns({"fused": (kernel, arrays), "unfused": (kernel.run_unfused, (arrays,)),
                      "cpu": (alone, arrays), "torch": (theirs, tensors)}, rounds, min)
        print(f"{name + ('' if rule == 'onednn.post_ops' else f' ({rule})'):52} "
              f"{t['fused'] * 1e3:7.3f} {t['unfused'] * 1e3:8.3f} {t['cpu'] * 1e3:7.3f} "
              f"{t['torch'] * 1e3:7.3f} {t['unfused'] / t['fused']:13.2f} "
              f"{t['cpu'] / t['fused']:12.2f} {t['torch'] / t['fused']:11.2f}")
    print("unfused: the same nodes through fw's kernels (fw_onednn's linear and eltwise); "
          "fw_cpu: NumPy's GEMM (OpenBLAS on one thread, as fw holds it while fw_onednn is "
          "loaded) and fw_cpu's eltwise")


def main() -> None:
    args, fw, torch = start(__doc__, "fw_onednn eltwise, norms and post-op fusion")
    from fw_cpu import plugin as fw_cpu_plugin

    cpu = {spec.op: spec.fn for spec in fw_cpu_plugin.fw_register_kernels()}
    crossover(cpu, args.rounds)
    workloads(fw, torch, cpu, args.rounds)
    fused(fw, torch, cpu, args.rounds)


if __name__ == "__main__":
    main()
