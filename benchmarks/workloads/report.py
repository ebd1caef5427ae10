"""The results as markdown: the machine, one row per (workload, mode), one per fw/PyTorch
ratio; and the doc section (between ``BEGIN`` and ``END``) they replace."""

from __future__ import annotations

from pathlib import Path

from . import WORKLOADS

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def _number(value, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


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
        "(median of per-round ratios; above 1: fw is slower):", "", ratio_table(results)])


def rewrite_doc(path: Path, section: str) -> None:
    """Replace what lies between the doc's results markers with ``section``."""
    text = path.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{path}: no {BEGIN} ... {END} markers to put the results between")
    head, rest = text.split(BEGIN, 1)
    path.write_text(f"{head}{BEGIN}\n{section}\n{END}{rest.split(END, 1)[1]}")
