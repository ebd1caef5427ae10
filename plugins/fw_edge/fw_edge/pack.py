"""``python -m fw_edge.pack model.fwm --out DIR``: a self-contained folder that runs the model
on NumPy alone: the fw-edge runtime (``DIR/fw_edge``, with only the kernel modules the model's
ops need) and the model file. Use it with::

    import sys; sys.path.insert(0, "DIR")
    import fw_edge, numpy as np
    prog = fw_edge.load("DIR/model.fwm")
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from . import load, registry


def pack(model, out) -> tuple[int, list[str]]:
    """Write the folder ``out`` for the ``.fwm`` file ``model``; returns its size in bytes and
    the ops whose kernels it holds.

    Raises:
        EdgeError: the model does not load with fw-edge's own kernels (a provider's kernels
            cannot be packed).
    """
    program = load(model, providers=False)
    source, out = Path(__file__).parent, Path(out)
    target = out / "fw_edge"
    if target.exists():
        shutil.rmtree(target)
    (target / "kernels").mkdir(parents=True)
    for file in source.glob("*.py"):
        shutil.copy2(file, target / file.name)
    shutil.copy2(source / "kernels" / "__init__.py", target / "kernels" / "__init__.py")
    for module in registry.modules_for(program.ops):
        shutil.copy2(source / "kernels" / f"{module}.py", target / "kernels" / f"{module}.py")
    shutil.copy2(model, out / Path(model).name)
    return sum(f.stat().st_size for f in out.rglob("*") if f.is_file()), program.ops


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fw_edge.pack", description=__doc__.split(
        "\n")[0].split(": ", 1)[1])
    parser.add_argument("model", help="the .fwm file to pack")
    parser.add_argument("--out", required=True, help="the folder to write (created if needed)")
    args = parser.parse_args(argv)
    size, ops = pack(args.model, args.out)
    print(f"{args.out}: {size / 1024:.1f} KiB (the runtime, kernels for {', '.join(ops)}, "
          f"and {Path(args.model).name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
