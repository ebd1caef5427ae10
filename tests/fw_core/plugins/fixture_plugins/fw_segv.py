"""A plugin whose import crashes the interpreter: a segfault, as in broken native code."""

import ctypes

ctypes.string_at(0)
