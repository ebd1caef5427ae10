"""fw.finfo and fw.iinfo give torch.finfo's and torch.iinfo's limits for every fw dtype."""

from __future__ import annotations

import pytest
import torch

import fw_core as fw
from fw_core.errors import DTypeError

FLOATS = [(fw.float16, torch.float16), (fw.bfloat16, torch.bfloat16),
          (fw.float32, torch.float32), (fw.float64, torch.float64)]
INTS = [(fw.uint8, torch.uint8), (fw.int8, torch.int8), (fw.int16, torch.int16),
        (fw.int32, torch.int32), (fw.int64, torch.int64)]


@pytest.mark.parametrize("ours, theirs", FLOATS)
def test_finfo_matches_torch(ours, theirs):
    got, want = fw.finfo(ours), torch.finfo(theirs)
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal"):
        assert float(getattr(got, field)) == getattr(want, field), field
    # 10 ** -precision, held in the dtype itself (as NumPy's finfo does): torch's is a float
    assert float(got.resolution) == pytest.approx(want.resolution, rel=1e-3)


@pytest.mark.parametrize("ours, theirs", INTS)
def test_iinfo_matches_torch(ours, theirs):
    got, want = fw.iinfo(ours), torch.iinfo(theirs)
    assert (got.bits, got.min, got.max) == (want.bits, want.min, want.max)


def test_finfo_defaults_to_float32_and_takes_names():
    assert fw.finfo().eps == torch.finfo().eps and fw.finfo("bfloat16").bits == 16


def test_the_wrong_family_is_refused_naming_the_other():
    with pytest.raises(DTypeError, match="floating") as error:
        fw.finfo(fw.int32)
    assert "iinfo" in str(error.value)
    with pytest.raises(DTypeError, match="integer") as error:
        fw.iinfo(fw.float32)
    assert "finfo" in str(error.value)
