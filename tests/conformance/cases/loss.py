"""loss op cases (being written)."""

CASES: list = []
