"""`history:` on a backend that cannot resume a planted conversation is refused before any
attempt, through the real `caliper` script: a Hermes that is not its Python console script,
and a third-party backend that does not declare `supports_conversation` (the fake agent)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from history_support import HISTORY

from caliper_fakeagent.harness import CALIPER, Workspace

pytest_plugins = ["caliper.testing.fixtures"]


def planted_spec(folder: Path) -> Path:
    (folder / "history.yaml").write_text(HISTORY, encoding="utf-8")
    spec = folder / "planted.eval.yaml"
    spec.write_text(
        "tasks:\n"
        "  - name: continues\n"
        "    history: history.yaml\n"
        "    prompt: go on\n"
        "    assert: assert True\n",
        encoding="utf-8",
    )
    return spec


def test_hermes_that_is_not_its_console_script_refuses_history(tmp_path: Path) -> None:
    """Planting goes through Hermes' own interpreter; a wrapper or binary cannot offer it."""
    spec = planted_spec(tmp_path)
    boxes = tmp_path / "boxes"
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "HERMES_CLI_PATH": "/bin/true",
        "CALIPER_TMPDIR": str(boxes),
        "LANG": "C.UTF-8",
    }
    done = subprocess.run(
        [str(CALIPER), "run", str(spec), "--k", "2", "--model", "hermes:custom/fake-model"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "task 'continues' declares history:" in done.stderr
    assert "Python console script inside Hermes' virtualenv" in done.stderr
    assert "Traceback" not in done.stderr
    assert not list(tmp_path.glob(".caliper/results/*/*.json"))
    assert not boxes.exists() or not any(boxes.iterdir())


def test_a_backend_without_supports_conversation_refuses_it(tmp_path: Path) -> None:
    space = Workspace.create(tmp_path)
    spec = planted_spec(tmp_path)
    done = space.run(spec, "--k", "1")
    assert done.returncode == 2, done.stderr
    assert "declares history:, which --model fake cannot use" in done.stderr
    assert "cannot start a task from a planted conversation" in done.stderr
    assert not any(space.sandboxes.iterdir())
    assert done.results_path is None


@pytest.mark.parametrize("backend", ["claude-code", "codex"])
def test_conversation_capable_backends_say_so(backend: str) -> None:
    from caliper.host.plugins import PluginHost

    found = PluginHost().backends([backend])[backend]
    assert found.supports_conversation() is True
    assert found.conversation_refusal() is None


@pytest.mark.e2e
def test_the_pinned_hermes_supports_conversation(agent_cli: Any, monkeypatch) -> None:
    from caliper_backend_hermes.backend import HermesBackend

    monkeypatch.setenv("HERMES_CLI_PATH", str(agent_cli("hermes").path))
    assert HermesBackend().supports_conversation() is True
    assert HermesBackend().conversation_refusal() is None


def test_a_broken_history_stops_the_run_before_any_attempt(tmp_path: Path) -> None:
    space = Workspace.create(tmp_path)
    spec = planted_spec(tmp_path)
    (tmp_path / "history.yaml").write_text("turns:\n  - user: a\n  - user: b\n", encoding="utf-8")
    done = space.run(spec, "--k", "1")
    assert done.returncode == 2, done.stderr
    assert "history.yaml:3:5: turns[1]: two `user:` turns in a row" in done.stderr
    assert "Traceback" not in done.stderr
    assert not any(space.sandboxes.iterdir())
