"""Helpers shared by the Claude Code backend tests (imported as ``claude_support``).

Tests that start the real ``claude`` only run inside a loopback-only network namespace
(``python -m caliper.testing.offline -- pytest …`` or ``unshare -n``); elsewhere they skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from caliper.plugin.attempt import AttemptRequest, AttemptSandbox
from caliper.plugin.skills import ResolvedSkill
from caliper.testing.agent_clis import bin_path
from caliper.testing.offline import loopback_only
from caliper_backend_claude.skills import ClaudeSkillInstaller


def claude_cli() -> Path | None:
    """The pinned ``claude`` under ``.agent-clis`` (``scripts/provision-agent-clis``)."""
    path = bin_path("claude")
    return path if path.exists() else None


needs_claude = pytest.mark.skipif(
    claude_cli() is None or not loopback_only()[0],
    reason="needs the pinned claude CLI (scripts/provision-agent-clis) and a loopback-only "
    "network namespace (python -m caliper.testing.offline -- pytest …)",
)


def use_model(monkeypatch: pytest.MonkeyPatch, url: str, key: str = "sk-test") -> None:
    """Point the backend at a scripted model server."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    if key:
        monkeypatch.setenv("ANTHROPIC_API_KEY", key)


def make_skill(root: Path, name: str, description: str, body: str) -> ResolvedSkill:
    """Write a skill folder and return it resolved."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n{body}\n", encoding="utf-8"
    )
    (folder / "notes.txt").write_text("extra file\n", encoding="utf-8")
    return ResolvedSkill(name=name, description=description, source_dir=folder)


def attempt(
    sandbox: AttemptSandbox,
    prompt: str,
    *,
    skills: list[ResolvedSkill] | None = None,
    timeout: float = 60.0,
    model: str | None = None,
    mcp=None,
) -> AttemptRequest:
    """An AttemptRequest with ``skills`` installed into the sandbox first."""
    installed = ClaudeSkillInstaller().install(skills or [], sandbox)
    return AttemptRequest(
        prompt=prompt, model=model, sandbox=sandbox, timeout=timeout, skills=installed, mcp=mcp
    )
