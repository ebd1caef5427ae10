"""The zoo's catalogue: models published under the ``fw_zoo.models`` entry-point group.

Each entry point maps a model name to a function of no arguments that builds the model from
files already on the machine. fw_zoo's own models are published the same way as anyone
else's (its pyproject), so a distribution adds a model to ``fw_zoo.load`` by declaring::

    [project.entry-points."fw_zoo.models"]
    my-model = "my_package.zoo:load"

A model zoo is not one of the ``fw.plugins`` hooks (those register ops, devices, kernels and
the like, frozen at ``import fw_core``), so it has its own group, read only when a model is
asked for.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

from fw_core.errors import MissingKeyError, PluginError

GROUP = "fw_zoo.models"


def _published() -> dict[str, list[EntryPoint]]:
    """Entry points by model name (lower case), every distribution's."""
    found: dict[str, list[EntryPoint]] = {}
    for ep in entry_points(group=GROUP):
        found.setdefault(ep.name.lower(), []).append(ep)
    return found


def available() -> list[str]:
    """The names ``load`` accepts, sorted."""
    return sorted(_published())


def load(name: str):
    """The model published as ``name`` (case-insensitive), built from its installed files.

    >>> encoder = fw_zoo.load("all-minilm-l6-v2")  # doctest: +SKIP
    >>> encoder.encode(["A cat sits on the mat."]).shape  # doctest: +SKIP
    (1, 384)

    Raises:
        MissingKeyError: no installed distribution publishes ``name`` (the message lists those
            that are).
        PluginError: two distributions publish it (naming both).
        FwError: whatever the model's loader raises, e.g. a ``CheckpointError`` giving the pip
            command for its missing weights package.
    """
    published = _published()
    found = published.get(str(name).lower())
    if not found:
        raise MissingKeyError(f"the zoo has no model named {name!r}",
                              hint=f"available: {', '.join(sorted(published)) or 'none'} "
                              "(fw_zoo.available())")
    if len(found) > 1:
        owners = " and ".join(f"{ep.value} ({ep.dist.name if ep.dist else '?'})"
                              for ep in found)
        raise PluginError(f"the model name {name!r} is published twice: by {owners}",
                          hint="uninstall one of those distributions")
    return found[0].load()()
