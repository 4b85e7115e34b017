"""docs/plugins/writing-a-plugin.md walks through examples/backend-opencode: every excerpt it
shows must still be in the file it names, and the example is complete (no ``...``)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "plugins" / "writing-a-plugin.md"
BLOCK = re.compile(r"```(?:python|toml)\n# (examples/\S+)\n(.*?)```", re.S)


def excerpts() -> list[tuple[str, list[str]]]:
    return [(path, body.splitlines()) for path, body in BLOCK.findall(GUIDE.read_text())]


def is_in_order(lines: list[str], source: list[str]) -> bool:
    """Whether every non-blank excerpt line occurs in ``source`` in the same order (the
    excerpt may be dedented and may skip lines)."""
    stripped = [line.strip() for line in source]
    at = 0
    for line in (x.strip() for x in lines if x.strip()):
        try:
            at = stripped.index(line, at) + 1
        except ValueError:
            return False
    return True


def test_the_guide_quotes_the_example_and_every_excerpt_is_current() -> None:
    found = excerpts()
    assert len(found) >= 10, "the guide no longer quotes the example backend"
    for path, lines in found:
        source = (ROOT / path).read_text().splitlines()
        assert is_in_order(lines, source), f"an excerpt of {path} in {GUIDE.name} is stale"
    quoted = {path for path, _ in found}
    for module in ("plugin.py", "backend.py", "config.py", "events.py"):
        assert f"examples/backend-opencode/src/caliper_backend_opencode/{module}" in quoted


def test_the_example_is_finished() -> None:
    for path, lines in excerpts():
        assert not any(line.strip() in ("...", "# ...") for line in lines), path
    for source in (ROOT / "examples" / "backend-opencode").rglob("*.py"):
        code = [line.strip() for line in source.read_text().splitlines()]
        assert "..." not in code, f"{source} has a placeholder"


def test_a_changed_line_is_noticed() -> None:
    path, lines = excerpts()[0]
    source = (ROOT / path).read_text().splitlines()
    changed = [line.replace("opencode", "opencoder") for line in source]
    assert is_in_order(lines, source)
    assert not is_in_order(lines, changed)
