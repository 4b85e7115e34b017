"""docs/plugins/api.md is generated from the docstrings and must match the code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gen-api-docs"
PAGE = ROOT / "docs" / "plugins" / "api.md"


def gen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_the_committed_api_reference_is_what_the_docstrings_say() -> None:
    done = gen("--check")
    assert done.returncode == 0, done.stderr


def test_a_stale_page_is_caught_with_the_command_to_fix_it(tmp_path: Path) -> None:
    stale = tmp_path / "api.md"
    stale.write_text(PAGE.read_text().replace("Run the agent once", "Run it", 1))
    done = gen("--check", "--output", str(stale))
    assert done.returncode == 1
    assert "scripts/gen-api-docs" in done.stderr and "out of date" in done.stderr


def test_the_page_covers_what_a_backend_uses() -> None:
    text = PAGE.read_text()
    for name in ("AttemptRequest", "AttemptResult", "Turn", "Usage", "ProcessResult",
                 "FolderSkillInstaller", "SetupError", "Backend", "BackendConformance",
                 "ConformanceKit", "EnvReferences"):  # fmt: skip
        assert f"### `{name}`" in text, name
    assert "### `run_process(argv: Sequence[str], *, env: Mapping[str, str]" in text
    assert "`from caliper.errors import SetupError`" in text
