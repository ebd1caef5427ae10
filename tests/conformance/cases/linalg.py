"""linalg op cases (being written)."""

CASES: list = []
