"""``python -m tests.fw_core.error_corpus [-v]``: the corpus counts (and, with -v, each
case that fails and why)."""

import sys

from . import counts

tried, fw_errors, complete = counts(verbose="-v" in sys.argv)
print(f"tried {tried} / FwError {fw_errors} / FwError with op, inputs and fix {complete}")
