"""conv op cases (being written)."""

CASES: list = []
