"""Every bad input of the error corpus gets a teaching FwError: the class, the op or layer,
an ``inputs:`` line and a ``fix:`` line (the cases: ``tests/fw_core/error_corpus``)."""

import pytest

from .error_corpus import CASES, check


@pytest.mark.parametrize("case", CASES, ids=[c.label for c in CASES])
def test_bad_input_gets_a_teaching_error(case):
    _, found = check(case)
    assert not found, "\n".join(found)


def test_the_corpus_is_large_and_labels_are_unique():
    assert len(CASES) >= 150
    assert len({c.label for c in CASES}) == len(CASES)
