"""The docs run: the ```python blocks of every ``docs/*.md`` execute, in order, in one fresh
interpreter per file (one shared namespace), from an empty temporary working directory.

Fences:
    ```python              run
    ```python no-run       shown only (needs a GPU, a network, or is a fragment)
    ```python file=PATH    written to PATH (relative to the working directory) instead of run:
                           a module a later block imports, such as a plugin's source
    any other language     shown only (bash, toml, text, ...)

A failing block fails the test with a traceback that points at the line in the markdown file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
_FENCE = re.compile(r"^```\s*(\S*)\s*(.*?)\s*$")

#: runs in the child: argv[1] is the JSON list of blocks; a block's code is compiled with the
#: markdown file's name and padded to its line, so tracebacks point into the markdown
_DRIVER = """\
import json, pathlib, sys
namespace = {"__name__": "__main__"}
for block in json.loads(pathlib.Path(sys.argv[1]).read_text()):
    if block["file"]:
        target = pathlib.Path(block["file"])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block["source"])
        continue
    code = compile("\\n" * (block["line"] - 1) + block["source"], block["path"], "exec")
    exec(code, namespace)
"""


def blocks(path: Path) -> list[dict]:
    """The python blocks to run or write, in order: {path, line, source, file}."""
    found, current = [], None
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        match = _FENCE.match(line)
        if current is None:
            if match:
                current = {"lang": match[1], "options": match[2].split(), "line": number + 1,
                           "lines": []}
        elif line.strip() == "```":
            if current["lang"] == "python" and "no-run" not in current["options"]:
                target = next((o[5:] for o in current["options"] if o.startswith("file=")), None)
                found.append({"path": str(path), "line": current["line"],
                              "source": "\n".join(current["lines"]) + "\n", "file": target})
            current = None
        else:
            current["lines"].append(line)
    if current is not None:
        raise AssertionError(f"{path.name}:{current['line'] - 1}: code block is never closed")
    return found


def run_markdown(path: Path, workdir: Path) -> subprocess.CompletedProcess:
    """Run the python blocks of ``path`` in a fresh interpreter inside ``workdir``."""
    workdir.mkdir(parents=True, exist_ok=True)
    spec = workdir.parent / f"{path.stem}.blocks.json"
    spec.write_text(json.dumps(blocks(path)))
    env = {k: v for k, v in os.environ.items()
           if k not in ("FW_PLUGINS", "FW_DISABLE_PLUGINS", "PYTHONPATH")}
    return subprocess.run([sys.executable, "-c", _DRIVER, str(spec)], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("path", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_markdown_code_blocks_run(path, tmp_path):
    if not blocks(path):
        return
    done = run_markdown(path, tmp_path / "work")
    assert done.returncode == 0, f"{path.name} failed:\n{done.stderr[-6000:]}"


# -- the runner itself ------------------------------------------------------------------------
SAMPLE = """\
# Sample

```python
value = 41
```

```python no-run
raise SystemExit("no-run blocks are not run")
```

```bash
exit 1
```

```python file=helper.py
ANSWER = 1
```

```python
import helper
value += helper.ANSWER
assert value == 42, value
print("value", value)
```
"""


def test_runner_runs_python_blocks_in_order_and_writes_files(tmp_path):
    doc = tmp_path / "sample.md"
    doc.write_text(SAMPLE)
    assert [(b["line"], b["file"]) for b in blocks(doc)] == [(4, None), (16, "helper.py"),
                                                             (20, None)]
    done = run_markdown(doc, tmp_path / "work")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "value 42\n"


def test_runner_reports_the_failing_line_of_the_markdown(tmp_path):
    doc = tmp_path / "broken.md"
    doc.write_text("Intro\n\n```python\nx = 1\nassert x == 2, 'x is not 2'\n```\n")
    done = run_markdown(doc, tmp_path / "work")
    assert done.returncode == 1
    assert f'File "{doc}", line 5' in done.stderr
    assert "AssertionError: x is not 2" in done.stderr


def test_runner_rejects_an_unclosed_block(tmp_path):
    doc = tmp_path / "open.md"
    doc.write_text("```python\nx = 1\n")
    with pytest.raises(AssertionError, match="open.md:1: code block is never closed"):
        blocks(doc)
