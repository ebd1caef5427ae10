"""The one exception fw-edge raises for a user's mistake or a file it cannot run."""

from __future__ import annotations


class EdgeError(ValueError):
    """A program file, a call or a kernel that fw-edge refuses: the message names the input,
    op or module concerned, what arrived, what was expected, and what to do about it."""
