"""The skill-listing warning says what the pinned CLI does for the model used: Claude Code's
budget is 1 % of the model's context window (8,000 / 30,000 / 40,000 characters, measured
against claude 2.1.332 in tests/backends/claude/test_claude_skill_loads.py); ``validate``,
which knows no model, names every figure. Through the real ``caliper validate``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from caliper_backend_claude.backend import ClaudeCodeBackend

CALIPER = Path(sys.executable).parent / "caliper"

MEASURED = {
    None: 30_000,
    "sonnet": 30_000,
    "opus": 30_000,
    "haiku": 30_000,
    "claude-sonnet-5": 30_000,
    "claude-opus-4-7": 30_000,
    "claude-opus-4-1": 30_000,
    "claude-sonnet-4-5": 8_000,
    "claude-sonnet-4-6": 8_000,
    "claude-opus-4-5": 8_000,
    "claude-opus-4-6": 8_000,
    "claude-haiku-4-5": 8_000,
    "claude-sonnet-4": 8_000,
    "claude-3-7-sonnet-latest": 8_000,
    "claude-sonnet-4-5[1m]": 40_000,
    "claude-opus-4-6[1m]": 40_000,
}
"""What claude 2.1.332 listed whole against the scripted server, per ``--model`` (170 skills
of 265-character lines: 22, 109 or 149 descriptions whole)."""


@pytest.mark.parametrize(("model", "budget"), sorted(MEASURED.items(), key=str))
def test_claude_budget_follows_the_model(model: str | None, budget: int) -> None:
    assert ClaudeCodeBackend().skill_listing_budget_for(model) == budget


def test_a_run_warns_with_the_models_own_figure() -> None:
    backend = ClaudeCodeBackend()
    pairs = [(f"s-{i:03d}", "d" * 350) for i in range(77)]  # ~27,600 characters
    assert backend.skill_listing_warning(pairs) is None  # the default shows them all
    assert backend.skill_listing_warning(pairs, "claude-sonnet-4-5[1m]") is None
    message = backend.skill_listing_warning(pairs, "claude-sonnet-4-5")
    assert message is not None and "with claude-sonnet-4-5 shows about 8,000" in message


def test_validate_names_every_figure_of_claude(tmp_path: Path) -> None:
    lines = ["skills:"]
    for index in range(40):
        folder = tmp_path / f"s-{index:02d}"
        folder.mkdir()
        description = f"Handles case {index} " + "x" * 230
        (folder / "SKILL.md").write_text(
            f"---\nname: s-{index:02d}\ndescription: {description}\n---\nBody.\n"
        )
        lines.append(f"  - ./s-{index:02d}")
    lines += ["tasks:", "  - name: t", "    prompt: p", "    assert: assert True"]
    spec = tmp_path / "many.eval.yaml"
    spec.write_text("\n".join(lines) + "\n")
    done = subprocess.run(
        [str(CALIPER), "validate", "--format", "json", str(spec)],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ.copy(),
    )
    assert done.returncode == 0, done.stderr
    messages = [w["message"] for w in json.loads(done.stdout)["specs"][0]["warnings"]]
    (claude,) = [m for m in messages if "claude-code" in m]
    assert "8,000 for claude-sonnet-4-5" in claude
    assert "30,000 for its default" in claude and "40,000 for a [1m] model" in claude
