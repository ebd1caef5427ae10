"""The op families the contract documents are the ones ops have."""

import re

from fw_core.ops import registry
from fw_core.records import OpDef


def test_the_documented_family_examples_are_families_ops_have():
    doc = OpDef.__doc__.split("family:")[1].split("doc:")[0]
    examples = set(re.findall(r'"([a-z_]+)"', doc))
    assert examples, "the family field lists examples"
    assert examples <= {op.family for op in registry.OPS.values()}

