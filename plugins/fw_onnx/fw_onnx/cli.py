"""``fw-onnx-ops``: list the program ops fw_onnx writes as ONNX, or the ONNX op types and
opset of an ONNX file."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fw-onnx-ops", description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", help="an .onnx file to describe")
    args = parser.parse_args(argv)
    if args.model is None:
        from .program import supported_ops

        print("\n".join(supported_ops()))
        return 0
    import onnx

    model = onnx.load(args.model)
    opsets = ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in model.opset_import)
    print(f"{args.model}: opset {opsets}")
    for op_type in sorted({n.op_type for n in model.graph.node}):
        print(f"  {op_type}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
