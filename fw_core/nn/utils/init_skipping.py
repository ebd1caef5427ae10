"""``skip_init``: build a module without initialising its parameters (``torch.nn.utils``'s)."""

from __future__ import annotations

from ...errors import ArgumentTypeError
from .. import init
from ..module import Module


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with its parameters and buffers left uninitialised, for
    a module whose weights are loaded next: no random values are drawn and, for most arrays,
    no memory is touched until the weights arrive (``load_state_dict``).

    The values until then are whatever the allocator left: never read them.

    >>> layer = fw.nn.utils.skip_init(fw.nn.Linear, 4096, 4096)  # doctest: +SKIP

    Raises:
        ArgumentTypeError: ``module_cls`` is not a Module class.
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise ArgumentTypeError(f"skip_init takes a Module class, got {module_cls!r}",
                                op="skip_init", hint="pass the class and its arguments: "
                                "skip_init(fw.nn.Linear, 10, 5)")
    with init.skipping():
        return module_cls(*args, **kwargs)
