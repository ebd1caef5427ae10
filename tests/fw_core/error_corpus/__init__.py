"""The error corpus: bad inputs a user really writes, each answered by a teaching fw error.

Every case is one row (:class:`~.common.Case`): a label, the call, the fw error class it must
raise, and the op or layer the error must name. Each error must be that FwError subclass, name
the op, carry an ``inputs:`` line saying what arrived and a ``fix:`` line. A row may add
``says``: a pattern the message must match (the huge allocations say how many bytes were asked
for and what the device has). ``tests/fw_core/test_error_corpus.py`` runs every row.

Print the counts (tried / FwError / FwError with op, inputs and fix; ``-v`` shows failures):

    .venv/bin/python -m tests.fw_core.error_corpus
"""

from __future__ import annotations

import re

from fw_core.errors import FwError

from .common import Case
from .layers import LAYERS
from .ops import OPS
from .training import TRAINING

CASES: list[Case] = OPS + LAYERS + TRAINING


def check(case: Case) -> tuple[bool, list[str]]:
    """(whether ``case`` raised an FwError, what is wrong with it: empty when it teaches)."""
    try:
        case.call()
    except FwError as err:
        found = []
        if not isinstance(err, case.error):
            found.append(f"raised {type(err).__name__}, expected {case.error.__name__}")
        if err.op != case.op:
            found.append(f"names op {err.op!r}, expected {case.op!r}")
        text = str(err)
        if not err.inputs or "\n  inputs:" not in text:
            found.append("has no inputs: line")
        if not err.hint or "\n  fix:" not in text:
            found.append("has no fix: line")
        if case.says and not re.search(case.says, text, re.DOTALL):
            found.append(f"does not say {case.says!r}")
        return True, found + ([f"the error was:\n{text}"] if found else [])
    except Exception as exc:  # noqa: BLE001 - the point is to report what escaped
        return False, [f"raised {type(exc).__name__} (not an FwError): {exc}"]
    return False, ["raised nothing"]


def counts(verbose: bool = False) -> tuple[int, int, int]:
    """(tried, FwError, complete: the expected FwError class naming the expected op, with an
    inputs line, a fix line and any ``says`` text); with ``verbose``, print each failure."""
    fw_errors = complete = 0
    for case in CASES:
        is_fw_error, found = check(case)
        fw_errors += is_fw_error
        complete += not found
        if found and verbose:
            print(f"FAIL {case.label}: " + "\n     ".join(found) + "\n")
    return len(CASES), fw_errors, complete
