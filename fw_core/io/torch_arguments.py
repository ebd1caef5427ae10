"""The arguments ``torch.save``/``torch.load`` take that ``fw.save``/``fw.load`` accept too.

A program ported from PyTorch passes them as it did; fw accepts each one whose request it can
meet and refuses, with what to do, each one it cannot:

- ``fw.save`` writes fw's own file (safetensors with a checksum), never a pickle. So
  ``pickle_protocol`` and ``_use_new_zipfile_serialization=True`` (the format of the pickle torch
  would write) change nothing and are accepted; ``pickle_module`` is accepted only as the
  standard :mod:`pickle` (torch's default); ``_use_new_zipfile_serialization=False`` asks for
  a file an old PyTorch reads, which fw does not write, and is refused;
  ``_disable_byteorder_record`` is accepted (fw's files are always little-endian).
- ``fw.load`` unpickles only through its restricted unpickler: ``pickle_module`` is accepted
  only as :mod:`pickle`; ``weights_only`` is accepted either way, and ``False`` does not make
  fw run code from a file; ``mmap`` is accepted (the file is read into memory either way); of
  ``pickle_load_args``, ``encoding``, ``errors`` and ``fix_imports`` are accepted (Python 2
  checkpoints need ``encoding="latin1"``).
"""

from __future__ import annotations

import pickle

from ..errors import ArgumentTypeError, UnsupportedError

_UNPICKLER_OPTIONS = ("encoding", "errors")


def _pickle_module(pickle_module, call: str) -> None:
    if pickle_module is not None and pickle_module is not pickle:
        raise UnsupportedError(
            f"{call}(pickle_module={getattr(pickle_module, '__name__', pickle_module)!r}): fw "
            "reads and writes no pickle through another module",
            hint=f"drop pickle_module (or pass the standard pickle module); {call} "
            "handles tensors, state dicts and plain values without it")


def check_save(pickle_module, pickle_protocol, use_new_zipfile: bool) -> None:
    """Refuse the torch.save arguments fw.save cannot honour (see the module docstring).

    Raises:
        UnsupportedError: ``pickle_module`` other than :mod:`pickle`, or
            ``_use_new_zipfile_serialization=False``.
        ArgumentTypeError: ``pickle_protocol`` is not an int.
    """
    _pickle_module(pickle_module, "fw.save")
    if pickle_protocol is not None and (isinstance(pickle_protocol, bool)
                                        or not isinstance(pickle_protocol, int)):
        raise ArgumentTypeError(f"fw.save(pickle_protocol={pickle_protocol!r}): not an int",
                                hint="drop it: fw.save writes no pickle")
    if not use_new_zipfile:
        raise UnsupportedError(
            "fw.save(_use_new_zipfile_serialization=False) asks for PyTorch's legacy file "
            "format, which fw does not write",
            hint="drop the argument: fw.save writes fw's safetensors file, which fw.load and "
            "safetensors tools read; for a file old PyTorch reads, save with torch")


def check_load(pickle_module, pickle_load_args: dict) -> dict:
    """Refuse the torch.load arguments fw.load cannot honour; returns the options for the
    unpickler (``encoding``, ``errors``).

    Raises:
        UnsupportedError: ``pickle_module`` other than :mod:`pickle`.
        ArgumentTypeError: a keyword torch.load does not pass to pickle's unpickler.
    """
    _pickle_module(pickle_module, "fw.load")
    options = dict(pickle_load_args)
    options.pop("fix_imports", None)  # the restricted unpickler maps Python 2 names always
    unknown = sorted(set(options) - set(_UNPICKLER_OPTIONS))
    if unknown:
        raise ArgumentTypeError(f"fw.load got unexpected keyword argument(s) {', '.join(unknown)}",
                                hint="fw.load takes f, map_location, pickle_module, "
                                "weights_only, mmap, encoding, errors and fix_imports")
    return options
