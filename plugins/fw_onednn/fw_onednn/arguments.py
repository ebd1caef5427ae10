"""The check fw_onednn's setters share: a whole number in range, or an ArgumentError naming
the setter, what arrived and an example."""

from __future__ import annotations

from fw_core.errors import ArgumentError


def whole_number(value, *, least: int, setter: str, name: str, example: str) -> int:
    """``value`` when it is an int (not a bool) of at least ``least``.

    Raises:
        ArgumentError: naming ``setter`` (``fw_onednn.set_num_threads``), with ``example`` as
            the fix.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        kind = "a positive integer" if least == 1 else f"an integer of at least {least}"
        raise ArgumentError(f"{name} must be {kind}, got {value!r}", op=setter,
                            inputs=f"{name}={value!r}", hint=f"e.g. {example}")
    return value
