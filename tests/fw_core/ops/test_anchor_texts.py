"""Each anchor that names a threshold in its text ("for |x| > ~3") marks that very threshold
with its region, so what the debugger measures is what the sentence says."""

import re

import pytest

import fw_core as fw

_THRESHOLD = re.compile(r"\|x\| > ~?(\d+(?:\.\d+)?)")

STATED = [(op.name, float(m.group(1))) for op in fw.OPS.values()
          if op.anchor.region is not None and (m := _THRESHOLD.search(op.anchor.says))]


def test_some_anchors_state_thresholds():
    assert {"tanh", "sigmoid", "erf"} <= {name for name, _ in STATED}


@pytest.mark.parametrize("name, threshold", STATED, ids=[n for n, _ in STATED])
def test_the_region_starts_where_the_text_says(name, threshold):
    region = fw.ops.get(name).anchor.region
    x = fw.tensor([threshold * 0.98, -threshold * 0.98, threshold * 1.02, -threshold * 1.02],
                  dtype=fw.float64)
    assert region(x).tolist() == [False, False, True, True], fw.ops.get(name).anchor.says
