"""creation op cases (being written)."""

CASES: list = []
