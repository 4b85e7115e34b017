"""Fixtures for the Claude Code backend tests: a clean environment, a sandbox, the backend."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from claude_support import claude_cli

from caliper.plugin.attempt import AttemptSandbox
from caliper.plugin.sandbox import make_sandbox, remove_sandbox
from caliper_backend_claude.backend import ClaudeCodeBackend
from caliper_backend_claude.home import is_forwarded


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Drop every variable the backend would forward, so the host's setup never leaks in."""
    for name in list(os.environ):
        if is_forwarded(name) or name in ("CLAUDE_CONFIG_DIR", "CLAUDE_CLI_PATH"):
            monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def fake_real_home(tmp_path: Path) -> Path:
    """An empty stand-in for the user's real home."""
    home = tmp_path / "real-home"
    home.mkdir()
    return home


@pytest.fixture
def sandbox(tmp_path: Path, fake_real_home: Path) -> Iterator[AttemptSandbox]:
    """A fresh attempt sandbox whose real_home is the fake one."""
    box = make_sandbox(spec_dir=tmp_path, parent=tmp_path)
    box = attrs.evolve(box, real_home=fake_real_home)
    yield box
    remove_sandbox(box)


@pytest.fixture
def backend(clean_env: pytest.MonkeyPatch) -> ClaudeCodeBackend:
    """The backend pointed at the pinned CLI, with retries off so errors surface at once."""
    cli = claude_cli()
    if cli is not None:
        clean_env.setenv("CLAUDE_CLI_PATH", str(cli))
    clean_env.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    return ClaudeCodeBackend()
