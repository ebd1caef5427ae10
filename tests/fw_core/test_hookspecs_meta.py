"""Meta-tests of the plugin contract (as datasette does): every hook spec in
``fw_core/hookspecs.py`` has a docstring, is implemented by a fixture plugin somewhere under
``tests/``, and has a section in ``docs/plugins.md`` that documents its records' fields."""

from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path

import pytest

from fw_core import hookspecs

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "plugins.md"
HOOKS = sorted(name for name, value in vars(hookspecs).items()
               if callable(value) and hasattr(value, "fw_spec"))


def test_every_fw_function_in_hookspecs_is_a_hook_spec():
    functions = {name for name, value in vars(hookspecs).items()
                 if name.startswith("fw_") and callable(value)}
    assert HOOKS and set(HOOKS) == functions, "decorate every hook in hookspecs.py with @hookspec"


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_spec_has_a_docstring(hook):
    doc = (getattr(hookspecs, hook).__doc__ or "").strip()
    assert len(doc.split()) >= 10, f"{hook} in fw_core/hookspecs.py needs a docstring: it is " \
        "the contract (when it is called, what it returns, what happens on failure)"


def _test_sources() -> dict[Path, str]:
    me = Path(__file__).resolve()
    return {p: p.read_text() for p in (ROOT / "tests").rglob("*.py") if p.resolve() != me}


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_is_implemented_by_a_fixture_plugin_in_the_tests(hook):
    pattern = re.compile(rf"^\s*def {hook}\(", re.MULTILINE)
    implementers = [p for p, text in _test_sources().items() if pattern.search(text)]
    assert implementers, f"no test plugin implements {hook}: add one to " \
        "tests/fw_core/plugins/fixture_plugins/ and a test that loads it"


def _guide_section(hook: str) -> str:
    """The text of the guide's section whose heading names ``hook`` (up to the next heading of
    the same or a higher level)."""
    text = GUIDE.read_text()
    heading = re.search(rf"^(#+) .*`{hook}`.*$", text, re.MULTILINE)
    assert heading, f"docs/plugins.md has no section (a heading with `{hook}`) for {hook}"
    level = len(heading[1])
    end = re.compile(rf"^#{{1,{level}}} ", re.MULTILINE).search(text, heading.end())
    return text[heading.end():end.start() if end else len(text)]


def _records(hook: str) -> list[type]:
    """The record classes a hook returns or receives (``Iterable[KernelSpec]``, ``config:
    PluginConfig``)."""
    hints = typing.get_type_hints(getattr(hookspecs, hook))
    found = []
    for hint in hints.values():
        for candidate in (hint, *typing.get_args(hint)):
            if dataclasses.is_dataclass(candidate):
                found.append(candidate)
    return found


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_has_a_section_in_the_plugin_guide(hook):
    section = _guide_section(hook)
    assert len(section.split()) >= 20, f"the section on {hook} in docs/plugins.md is empty"


@pytest.mark.parametrize("hook", [h for h in HOOKS if _records(h)])
def test_guide_documents_every_field_of_the_hook_records(hook):
    section = _guide_section(hook)
    for record in _records(hook):
        assert f"`{record.__name__}`" in section, f"the {hook} section never names {record}"
        missing = [f.name for f in dataclasses.fields(record) if f"`{f.name}`" not in section]
        assert not missing, f"docs/plugins.md, section {hook}: document {record.__name__}'s " \
            f"fields {missing}"
