"""Real plugin distributions for the plugin-platform tests.

``site`` installs fixture plugins (``fixture_plugins/*.py``) the way pip would leave them: the
module next to a ``<name>-<version>.dist-info`` folder holding ``METADATA`` and
``entry_points.txt`` (group ``fw.plugins``). Each plugin gets its own folder on ``PYTHONPATH``,
in install order, ahead of the environment's site-packages; fw loads plugins by name whatever
that order is (the conflict tests rely on it). Checks run in a fresh interpreter, so discovery
happens exactly as for a user; the manager is never patched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixture_plugins"

#: runs before every script: fw is imported (plugins load here) and ``out`` collects results
_PRELUDE = """\
import json, warnings
import fw_core as fw
from fw_core import errors
out = {}


def states(*names):
    # the state of each named plugin; other plugins installed in the environment are left out
    found = {i.name: i.state for i in fw.plugins.info()}
    return {name: found.get(name, "not installed") for name in names}
"""
_MARK = "@@fw-test-out@@"
_EPILOGUE = f"\nprint({_MARK!r} + json.dumps(out, default=str))\n"


class Site:
    """A set of installed fixture plugins and ways to run Python or ``fw`` against them."""

    def __init__(self, root: Path, blocked: tuple[str, ...] = ()):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.paths: list[Path] = []
        self.blocked = blocked  # installed plugins kept out of every run, besides a run's own

    def install(self, module: str, *, dist: str | None = None, version: str = "0.1.0",
                requires: str | None = "fw-core>=0.1", entry_name: str | None = None,
                copy_module: bool = True) -> Site:
        """Install fixture plugin ``module`` as distribution ``dist`` (default: the module name
        with dashes) whose entry point ``entry_name`` (default: the module) names ``module``."""
        dist = dist or module.replace("_", "-")
        folder = self.root / f"{len(self.paths):02d}-{dist}"
        folder.mkdir(parents=True)
        if copy_module:
            shutil.copy(FIXTURES / f"{module}.py", folder)
        info = folder / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        metadata = f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
        if requires:
            metadata += f"Requires-Dist: {requires}\n"
        (info / "METADATA").write_text(metadata)
        (info / "entry_points.txt").write_text(
            f"[fw.plugins]\n{entry_name or module} = {module}\n")
        self.paths.append(folder)
        return self

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("FW_PLUGINS", "FW_DISABLE_PLUGINS", "PYTHONPATH")}
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in self.paths)
        env.update(extra)
        blocked = ",".join(filter(None, [extra.get("FW_DISABLE_PLUGINS"), *self.blocked]))
        if blocked:
            env["FW_DISABLE_PLUGINS"] = blocked
        return env

    def python(self, *code: str, **env: str) -> dict:
        """Run the ``code`` pieces (each dedented) after ``import fw_core as fw`` in a fresh
        interpreter, with ``env`` added to the environment; return the JSON of the ``out`` dict
        they fill. A non-zero exit fails the test with the child's stderr."""
        script = _PRELUDE + "".join(textwrap.dedent(c) for c in code) + _EPILOGUE
        done = subprocess.run([sys.executable, "-c", script], cwd=self.root, env=self.env(**env),
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            pytest.fail(f"child interpreter failed (exit {done.returncode}):\n{done.stderr}",
                        pytrace=False)
        line = next(x for x in reversed(done.stdout.splitlines()) if x.startswith(_MARK))
        return json.loads(line[len(_MARK):])

    def fw(self, *args: str, **env: str) -> subprocess.CompletedProcess:
        """Run the ``fw`` command (``python -m fw_core.cli``) with these plugins installed."""
        return subprocess.run([sys.executable, "-m", "fw_core.cli", *args], cwd=self.root,
                              env=self.env(**env), capture_output=True, text=True, timeout=120)


@pytest.fixture
def site(tmp_path: Path) -> Site:
    """An empty site; ``site.install("fw_toy")`` adds fixture plugins to it."""
    return Site(tmp_path / "site")


@pytest.fixture(scope="session")
def zoo(tmp_path_factory) -> Site:
    """A messy environment, in this ``sys.path`` order: working plugins next to every kind of
    broken one (see each fixture plugin's docstring). fw_onednn, where installed, is kept out:
    its guarded kernels would sit above the zoo's contests for cpu (settle()'s tests have
    that case)."""
    site = Site(tmp_path_factory.mktemp("zoo"), blocked=("fw_onednn",))
    for module in ("fw_toy", "fw_fastadd", "fw_dupadd", "fw_broken", "fw_badsig", "fw_typo",
                   "fw_raising", "fw_wrongrecord", "fw_badconfig", "fw_toyfork", "fw_addop",
                   "fw_betterrelu", "fw_altcpu", "fw_sysexit", "fw_genexit", "fw_baseexc",
                   "fw_exithook"):
        site.install(module)
    site.install("fw_cube", requires="fw-core>=9")  # a release built for a future fw-core
    # an old distribution publishing the same module under its former plugin name
    site.install("fw_toy", dist="fw-toy-legacy", entry_name="fw_toy_legacy", copy_module=False)
    return site


@pytest.fixture(scope="session")
def loaded(zoo) -> dict:
    """What one fresh interpreter saw of the zoo: every row, the dispatch table, and the
    results of ops that the contested kernels serve."""
    return zoo.python("""
        import dataclasses
        out["plugins"] = {i.name: dataclasses.asdict(i) for i in fw.plugins.info()}
        out["order"] = [i.name for i in fw.plugins.info()]
        x = fw.tensor([1.0, 2.0])
        out["add"], out["exp"] = (x + x).tolist(), fw.exp(x * 0.0).tolist()
        out["relu"] = fw.relu(fw.tensor([-1.0, 2.0])).tolist()
        out["toy"] = (x.to("toy") * x.to("toy")).tolist()
        out["alt"] = (x.to("alt") + x.to("alt")).to("cpu").tolist()
        out["ops"] = sorted(fw.OPS)
        out["inspectors"] = fw.inspectors.registered()
        out["devices"] = sorted(fw.available_devices())
        out["dispatch"] = {f"{r['op']}@{r['device']}": [r["plugin"], r["why"]]
                           for r in fw.plugins.dispatch_table()}
        import fw_betterrelu, fw_fastadd
        out["betterrelu_calls"] = fw_betterrelu.CALLS
        out["fastadd_calls"] = fw_fastadd.CALLS
        out["fastadd_configured"] = [list(c.plugins) for c in fw_fastadd.CONFIGURED]
        try:
            fw.plugins.require("fw_broken")
        except errors.PluginError as e:
            out["require"] = str(e)
    """)
