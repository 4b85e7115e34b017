"""The run_caliper / fake_real_home fixtures and helpers, driven with the ``fake`` backend."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from caliper.testing import agent_clis
from caliper.testing.harness import FakeRealHome, find_agent_cli, processes_mentioning
from caliper.testing.offline import loopback_only
from caliper.testing.script import ScriptError

pytest_plugins = ["caliper.testing.fixtures"]

FAKE_AGENT = Path(sys.executable).parent / "fake-agent"


def write_spec(project: Path, prompt: str) -> Path:
    project.mkdir(parents=True, exist_ok=True)
    spec = project / "demo.eval.yaml"
    body = textwrap.indent(prompt, "      ")
    spec.write_text(f"tasks:\n  - name: t\n    prompt: |\n{body}\n    assert: assert True\n")
    return spec


def test_fake_real_home_reports_added_removed_modified(tmp_path: Path) -> None:
    home = FakeRealHome(tmp_path / "h")
    (home.path / "keep.txt").write_text("a")
    (home.path / "gone.txt").write_text("b")
    before = home.snapshot()
    (home.path / "keep.txt").write_text("changed")
    (home.path / "gone.txt").unlink()
    (home.path / ".config").mkdir()
    (home.path / ".config" / "new.json").write_text("{}")
    (home.path / ".cache" / "python-entrypoints").mkdir(parents=True)
    (home.path / ".cache" / "python-entrypoints" / "x").write_text("ignored")
    assert home.changes(before) == [
        "added: .config",
        "added: .config/new.json",
        "removed: gone.txt",
        "modified: keep.txt",
    ]


def test_run_caliper_returns_results_and_a_clean_home(
    run_caliper, fake_real_home, tmp_path
) -> None:
    spec = write_spec(tmp_path / "project", "fake: usage 10 2\nfake: say hello there")
    run = run_caliper(
        "run", spec, "--model", "fake", "--k", "1", env={"FAKE_AGENT_CLI_PATH": str(FAKE_AGENT)}
    )
    assert run.returncode == 0, run.describe()
    assert run.attempt["final_answer"] == "hello there"
    assert run.attempt["outcome"] == "pass"
    assert run.results_path.parent.parent == tmp_path / "project" / ".caliper" / "results"
    assert run.home_changes == ()


def test_run_caliper_catches_an_attempt_writing_the_real_home(
    run_caliper, fake_real_home, tmp_path
) -> None:
    intruder = fake_real_home.path / "intruder.txt"
    spec = write_spec(tmp_path / "project", f"fake: write {intruder} oops\nfake: say done")
    run = run_caliper(
        "run", spec, "--model", "fake", "--k", "1", env={"FAKE_AGENT_CLI_PATH": str(FAKE_AGENT)}
    )
    assert run.returncode == 0, run.describe()
    assert run.home_changes == ("added: intruder.txt",)


def test_run_caliper_without_results(run_caliper) -> None:
    run = run_caliper("run", "missing.eval.yaml", "--model", "fake")
    assert run.returncode == 2
    assert run.results is None and run.attempts() == []


def test_processes_mentioning_finds_cwd_and_cmdline(tmp_path: Path) -> None:
    marker = tmp_path / "box"
    marker.mkdir()
    proc = subprocess.Popen(["sleep", "30"], cwd=marker)
    try:
        found = processes_mentioning(str(marker))
        assert any(f"pid {proc.pid}:" in line for line in found), found
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert not any(f"pid {proc.pid}:" in line for line in processes_mentioning(str(marker)))


def test_find_agent_cli_explains_what_is_missing(tmp_path: Path, monkeypatch) -> None:
    assert "unknown agent CLI 'nope'" in find_agent_cli("nope", tmp_path)
    monkeypatch.setenv("CALIPER_AGENT_CLIS", str(tmp_path / "empty"))
    message = find_agent_cli("codex", tmp_path / "bin")
    assert isinstance(message, str)
    if loopback_only()[0]:
        assert "not provisioned" in message and agent_clis.INSTALL_COMMAND in message
    else:
        assert "python -m caliper.testing.offline -- pytest" in message


@pytest.mark.e2e
def test_agent_cli_fixture_gives_a_bin_dir_with_only_that_cli(agent_cli) -> None:
    cli = agent_cli("claude")  # skips outside the namespace or when not provisioned
    assert [p.name for p in cli.bin_dir.iterdir()] == ["claude"]
    assert cli.path_env("/usr/bin").split(":") == [str(cli.bin_dir), "/usr/bin"]
    assert cli.path == agent_clis.bin_path("claude")


STARTED: list = []


def test_model_server_fixture_starts_servers(model_server) -> None:
    server = model_server({"turns": [{"text": "hi"}]})
    STARTED.append(server)
    urllib.request.urlopen(server.url + "/v1/models", timeout=5).close()
    with pytest.raises(ScriptError):
        model_server(42)


def test_model_server_fixture_stopped_them_at_teardown() -> None:
    assert STARTED, "run together with the previous test"
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(STARTED[0].url + "/v1/models", timeout=5)
