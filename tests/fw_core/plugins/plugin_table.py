"""Reading the table of ``fw plugins`` back into rows, for the tests that run the command."""

import re


def parse(text):
    """``fw plugins`` output as {plugin: (version, state, import time, provides, lines under
    the row)}."""
    rows, under = {}, []
    for line in text.splitlines()[1:]:
        if line.startswith("(each plugin"):  # the --isolate footer
            break
        if line[0].isspace():
            under.append(line.strip())
        else:
            name, version, state, seconds, provides = re.split(r"\s{2,}", line, maxsplit=4)
            under = []
            rows[name] = (version, state, seconds, provides, under)
    return rows


def table(text):
    """``fw plugins`` output as {plugin: (version, state, provides, lines under the row)}."""
    return {name: (v, state, provides, under)
            for name, (v, state, _, provides, under) in parse(text).items()}
