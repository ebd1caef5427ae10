"""nn op cases (being written)."""

CASES: list = []
