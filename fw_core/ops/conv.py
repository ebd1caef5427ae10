"""conv ops (being written)."""

__all__: list[str] = []
METHODS: dict = {}
