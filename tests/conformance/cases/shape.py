"""shape op cases (being written)."""

CASES: list = []
