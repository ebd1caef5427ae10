"""Finding plugins: the ``fw.plugins`` entry points and the plugins registered in this process,
in load order, with their versions and whether their fw-core requirement admits this fw-core.

Everything here reads distribution metadata as plain lines and parses a requirement only when it
names fw-core, because ``import fw_core`` pays for this on every start.
"""

from __future__ import annotations

import functools
import re

import importlib_metadata

GROUP = "fw.plugins"
CORE = "fw_core"


#: a requirement's project name (PEP 508), and what follows it
_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(.*)", re.S)


def incompatibility(dist) -> str | None:
    """Why a plugin's distribution cannot run with this fw-core, or None.

    Only its requirements that name fw-core are parsed, and a plain one (``fw-core>=0.1``: no
    extras, marker or URL) as a specifier set alone: ``packaging.requirements`` costs
    ``import fw_core`` about 10 ms, which the rare other forms still pay."""
    from . import __version__

    for text in headers(dist).get("requires-dist", ()):
        named = _REQUIREMENT_NAME.match(text)
        # PEP 503's normalised name: runs of "-", "_", "." are one "-", case folded
        if named is None or re.sub(r"[-_.]+", "-", named[1]).lower() != "fw-core":
            continue
        specifier = _fw_core_specifier(text, named[2].strip())
        if specifier is not None and not specifier.contains(__version__, prereleases=True):
            return f"needs fw-core{specifier}, but fw-core {__version__} is installed"
    return None


def _fw_core_specifier(text: str, rest: str):
    """The version specifier of the fw-core requirement ``text`` (``rest``: what follows the
    name), or None when it does not apply (a marker) or cannot be read."""
    if not re.search(r"[\[;@]", rest):
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            return SpecifierSet(rest.strip("() "))
        except InvalidSpecifier:
            return None
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    return req.specifier if req.marker is None else None


@functools.lru_cache(maxsize=64)
def headers(dist) -> dict[str, list[str]]:
    """The header fields of a distribution's METADATA (lower-case name -> values), read as
    lines, once per distribution object (the version, then the requirements): ``dist.version``
    and ``dist.requires`` parse it with email.parser and its policies, whose import costs
    ``import fw_core`` ~8 ms."""
    fields: dict[str, list[str]] = {}
    last = None
    for line in (dist.read_text("METADATA") or dist.read_text("PKG-INFO") or "").splitlines():
        if not line.strip():
            break  # the body (the long description) follows the first blank line
        if line[0] in " \t" and last is not None:  # a folded continuation of the last field
            last[-1] += " " + line.strip()
            continue
        name, _, value = line.partition(":")
        last = fields.setdefault(name.strip().lower(), [])
        last.append(value.strip())
    return fields


def candidates(in_process: dict):
    """(name, loader, version, distribution) in load order: fw_core's builtins first, then the
    entry points and the plugins registered in this process (``in_process``), by name, so that
    nothing depends on the order of ``sys.path``. Of two distributions publishing one plugin
    name, the first by distribution name is used."""
    from . import __version__, builtin

    found = {}
    entry_points = importlib_metadata.entry_points(group=GROUP)
    for ep in sorted(entry_points, key=lambda ep: (ep.name, ep.dist.name if ep.dist else "")):
        if ep.name != CORE:
            version = headers(ep.dist).get("version", ["?"])[0] if ep.dist else "?"
            found.setdefault(ep.name, (ep, version, ep.dist))
    for name, plugin in in_process.items():
        # register() refuses installed names; setdefault guards against later installs
        found.setdefault(name, ((lambda plugin=plugin: plugin), "in-process", None))
    yield CORE, (lambda: builtin), __version__, None
    for name in sorted(found):
        yield (name, *found[name])
