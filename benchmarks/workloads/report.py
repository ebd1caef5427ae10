"""The results as markdown: the machine, one row per (workload, mode), one per fw/PyTorch
ratio, one per GEMM/conv phase against oneDNN's own rate; and the doc section (between
``BEGIN`` and ``END``) they replace."""

from __future__ import annotations

from pathlib import Path

from . import WORKLOADS

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def _number(value, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{share:.0%}"


def _large_batch(name: str) -> int | None:
    return next((b for b in WORKLOADS[name].infer_batches if b != 1), None)


def mode_table(results: dict) -> str:
    lines = ["| workload | mode | train samples/s | infer b1 ms | infer bN ms (N) | "
             "peak RSS MiB | compile s (train + infer) | warm start s | note |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for name in WORKLOADS:
        for mode, r in results.get(name, {}).items():
            big = _large_batch(name)
            large = f"{_number(r.get(f'infer_b{big}_ms'))} ({big})" if big else "-"
            compiled = (f"{_number(r.get('compile_s'))} + {_number(r.get('infer_compile_s'))}"
                        if "compile_s" in r else "-")
            warm = (f"{_number(r.get('warm_start_s'))} + {_number(r.get('warm_start_infer_s'))}"
                    if "warm_start_s" in r else "-")
            note = (f"error: {r['error'][:100]}" if "error" in r
                    else f"{r['optimizer']} optimizer" if "optimizer" in r else "")
            lines.append(f"| {name} | {mode} | {_number(r.get('train_samples_per_s'), 0)} | "
                         f"{_number(r.get('infer_b1_ms'), 3)} | {large} | "
                         f"{_number(r.get('peak_rss_mib'), 0)} | {compiled} | {warm} | {note} |")
    return "\n".join(lines)


def ratio_table(results: dict) -> str:
    lines = ["| workload | fw mode / torch_eager | train | infer b1 | infer bN | "
             "torch optimizer |", "| --- | --- | ---: | ---: | ---: | --- |"]
    for name, pairs in results["ratios"].items():
        big = _large_batch(name)
        for pair, r in pairs.items():
            if "error" in r:
                lines.append(f"| {name} | {pair} | error: {r['error'][:100]} | | | |")
                continue
            large = _number(r.get(f"infer_b{big}")) if big else "-"
            lines.append(f"| {name} | {pair} | {_number(r.get('train'))} | "
                         f"{_number(r.get('infer_b1'))} | {large} | "
                         f"{r.get('torch_optimizer', '')} |")
    return "\n".join(lines)


def _operands(phase: dict) -> str:
    """``128x784, 512x784ᵀ, 512``: each operand's shape, ᵀ where it is not C-contiguous (a
    transposed view), then the einsum equation."""
    shapes = [("x".join(map(str, s)) or "scalar") + ("ᵀ" if t else "")
              for s, t in zip(phase["shapes"], phase["transposed"]) if s is not None]
    return ", ".join(shapes) + (f" ({phase['equation']})" if phase.get("equation") else "")


def phase_table(phases: dict) -> str:
    """One row per GEMM/conv phase of each workload's step, then a total per workload."""
    lines = ["| workload | pass | op | operands | calls | served by | fw GFLOP/s | "
             "oneDNN GFLOP/s | fw / oneDNN | others' CPU |",
             "| --- | --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: |"]
    totals = ["| workload | fw ms per step | oneDNN ms per step | time-weighted fw / oneDNN | "
              "others' CPU |", "| --- | ---: | ---: | ---: | ---: |"]
    for name, found in phases.items():
        if "error" in found:
            lines.append(f"| {name} | error: {found['error'][:100]} | | | | | | | | |")
            continue
        for p in found["phases"]:
            lines.append(f"| {name} | {p['phase']} | {p['op']} | {_operands(p)} | "
                         f"{p['calls']} | {p['served_by']} | {_number(p['fw_gflop_s'], 1)} | "
                         f"{_number(p['onednn_gflop_s'], 1)} | {_number(p['fraction'])} | "
                         f"{_percent(p.get('others_cpu'))} |")
        totals.append(f"| {name} | {_number(found['fw_ms'], 3)} | "
                      f"{_number(found['onednn_ms'], 3)} | {_number(found['fraction'])} | "
                      f"{_percent(found.get('others_cpu'))} |")
    return "\n".join(lines + [""] + totals)


def markdown(results: dict) -> str:
    """The results section: the machine, the per-mode table and the ratio table."""
    m = results["machine"]
    return "\n".join([
        f"Measured {m['date']}{' with --quick (short timings: not for comparison)' * m['quick']}"
        f" on {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB ({m['system']}); "
        f"Python {m['python']}, NumPy {m['numpy']}, PyTorch {m['torch']} "
        f"({m['torch_threads']} threads), Numba {m['numba']}; "
        f"OPENBLAS_NUM_THREADS {m['openblas_num_threads']}; fw plugins: "
        f"{m.get('fw_plugins') or 'none'}" + (f"; {m['onednn']}" if m.get("onednn") else "") + ".",
        "",
        f"Machine limits measured by the same run: float32 GEMM "
        f"{m['gemm_f32_gflop_s']:.0f} GFLOP/s (NumPy 2048x2048), copy {m['copy_gb_s']:.1f} "
        "GB/s (read + write).",
        "", mode_table(results), "",
        "Time ratios, fw over PyTorch eager, timed in alternating rounds in one process "
        "(median of per-round ratios; above 1: fw is slower):", "", ratio_table(results),
        *(["", "GEMM and convolution phases of one fw_eager training step: fw's cpu kernel "
           "as fw dispatches it against oneDNN's own primitive for the same shape and strides, "
           "executed alone in a compiled loop (best of alternating rounds; fw / oneDNN is "
           "fw's FLOP/s over oneDNN's; the issue's target: 0.85 or more; others' CPU: the "
           "share of the machine other processes used meanwhile, which slows oneDNN's OpenMP "
           "team most):", "",
           phase_table(results["phases"])] if results.get("phases") else [])])


def rewrite_doc(path: Path, section: str) -> None:
    """Replace what lies between the doc's results markers with ``section``."""
    text = path.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{path}: no {BEGIN} ... {END} markers to put the results between")
    head, rest = text.split(BEGIN, 1)
    path.write_text(f"{head}{BEGIN}\n{section}\n{END}{rest.split(END, 1)[1]}")
