"""reduction op cases (being written)."""

CASES: list = []
