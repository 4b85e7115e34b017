"""Codex seeds the attempt home in ``prepare_home`` (which the runner may call ahead): the run
then writes only its config.toml, and the home holds the same files either way."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from caliper.plugin.attempt import AttemptSandbox
from caliper.plugin.sandbox import make_sandbox, remove_sandbox
from caliper.runner.attempt.environment import seed_ahead
from caliper_backend_codex import home
from caliper_backend_codex.backend import CodexBackend

CONFIG = 'model = "gpt-5.5"\n[mcp_servers.personal]\ncommand = "mine"\n'


def tree(sandbox: AttemptSandbox) -> dict[str, bytes]:
    """Every file under the sandbox home, its own root path written as ``ROOT``."""
    root = str(sandbox.root).encode()
    return {
        str(path.relative_to(sandbox.home)): path.read_bytes().replace(root, b"ROOT")
        for path in sorted(sandbox.home.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def real_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CODEX_HOME", raising=False)
    user = tmp_path / "real"
    (user / ".codex" / "skills" / "mine").mkdir(parents=True)
    (user / ".codex" / "config.toml").write_text(CONFIG)
    (user / ".codex" / "auth.json").write_text('{"token": "t"}')
    (user / ".codex" / "AGENTS.md").write_text("rules\n")
    (user / ".codex" / "skills" / "mine" / "SKILL.md").write_text(
        "---\nname: mine\ndescription: d\n---\n"
    )
    return user


def sandbox_of(tmp_path: Path, real_home: Path, name: str) -> AttemptSandbox:
    (tmp_path / name).mkdir()
    made = make_sandbox(spec_dir=tmp_path, parent=tmp_path / name)
    return attrs.evolve(made, real_home=real_home)


@pytest.mark.parametrize("judge", [False, True])
def test_the_home_is_the_same_whether_seeded_ahead_or_not(
    tmp_path: Path, real_home: Path, judge: bool
) -> None:
    backend = CodexBackend()
    now = sandbox_of(tmp_path, real_home, "now")
    ahead = seed_ahead(backend, sandbox_of(tmp_path, real_home, "ahead"))
    seeded = tree(ahead)
    assert set(seeded) == {".codex/auth.json"}  # login only: config.toml is the run's
    options = (
        {"skill_instructions": False}
        if judge
        else {"mcp_servers": {"echo": {"command": "echo"}}, "user_customizations": True}
    )
    made = [home.prepare(box, seeded=backend.seeded_home(box), **options) for box in (now, ahead)]
    assert tree(now) == tree(ahead)
    assert ".codex/config.toml" in tree(now)
    assert made[0].env["CODEX_HOME"] == str(now.home / ".codex")
    assert made[1].env["CODEX_HOME"] == str(ahead.home / ".codex")
    assert made[0].config == made[1].config
    assert made[0].user_setup == made[1].user_setup
    for box in (now, ahead):
        remove_sandbox(box)


def test_a_malformed_user_config_is_a_setup_error_result(tmp_path: Path, real_home: Path) -> None:
    (real_home / ".codex" / "config.toml").write_text("not = [toml")
    from caliper.plugin.attempt import AgentStatus, AttemptRequest

    box = sandbox_of(tmp_path, real_home, "bad")
    result = CodexBackend().attempt(
        Path("/nonexistent/codex"), AttemptRequest(prompt="p", model=None, sandbox=box, timeout=5)
    )
    assert result.status is AgentStatus.SETUP_ERROR
    remove_sandbox(box)
