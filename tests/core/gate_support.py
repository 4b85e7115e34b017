"""A spec whose tasks pass at seeded rates, for gate tests through the real `caliper` script.

Each task's assert keeps a per-task counter beside the spec (under a file lock, so the
order attempts finish in does not matter) and passes on the attempts its pattern marks
``P``: with k attempts a pattern of length k gives exactly that many passes.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import xmlschema
from markdown_it import MarkdownIt

from caliper_fakeagent.harness import Workspace

# The JUnit format as CI systems read it; see the docstring of test_run_junit.py for where
# the schema comes from.
JUNIT_SCHEMA = xmlschema.XMLSchema(Path(__file__).with_name("schemas") / "junit-jenkins.xsd")


def render_markdown(markdown: str) -> ET.Element:
    """``markdown`` rendered as GitHub would (CommonMark + GFM tables), as an element tree."""
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    return ET.fromstring(f"<div>{html}</div>")


def markdown_tables(markdown: str) -> list[list[list[str]]]:
    """Every table of ``markdown`` as rows of cell texts, as a GFM renderer shows them."""
    return [
        [["".join(cell.itertext()) for cell in row] for row in table.iter("tr")]
        for table in render_markdown(markdown).iter("table")
    ]


ASSERT = """\
import fcntl, os
from pathlib import Path
pattern = {pattern!r}
counter = Path(os.environ["CALIPER_SPEC_DIR"]) / "counters" / {slot!r}
counter.parent.mkdir(exist_ok=True)
with open(counter.parent / "lock", "w") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    seen = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(seen + 1))
assert pattern[seen % len(pattern)] == "P", "seeded failure"
"""


def seeded_spec(space: Workspace, patterns: dict[str, str], name: str = "demo", extra: str = ""):
    """Write a spec with one task per ``name -> pattern`` (``"PPF"``: pass, pass, fail);
    ``extra`` is more task YAML appended as written (indented as list items of ``tasks:``)."""
    lines = ["tasks:"]
    for slot, (task, pattern) in enumerate(patterns.items()):
        code = ASSERT.format(pattern=pattern, slot=str(slot))
        lines.append(f"  - name: {task!r}")
        lines.append('    prompt: "fake: say done"')
        lines.append("    assert: |")
        lines.extend("      " + line for line in code.splitlines())
    path = space.root / f"{name}.eval.yaml"
    path.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    return path
