"""`caliper validate --probe`: checks run with no agent at all, through the real `caliper` script.

The probe runs each task's setup: and checks in a fresh sandbox and flags every check that
passes anyway. The tests put recording stand-ins for every agent CLI on PATH (and as the fake
backend's CLI) to prove that no agent is ever started; a control run shows the recorder works.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from caliper.plugin.judge import LLM_JUDGE_MARKER
from caliper_fakeagent.harness import CALIPER, FAKE_AGENT, Workspace

SPEC = """\
tasks:
  - name: lazy check
    prompt: "fake: say hi"
    setup: "echo hello > out.txt"
    assert: |
      from pathlib import Path
      assert Path("out.txt").exists()
  - name: real check
    prompt: "fake: write out.txt hello"
    assert: |
      from pathlib import Path
      assert Path("out.txt").exists(), "out.txt was not created"
  - name: trigger only
    prompt: "fake: say hi"
    activates: []
  - name: broken setup
    prompt: "fake: say hi"
    setup: "exit 4"
    assert: "assert True"
  - name: judged
    prompt: "fake: say hi"
    expect: "the agent said hi"
"""

AGENT_CLIS = ("fake-agent", "claude", "codex", "pi", "hermes")


def _recorder(folder: Path, log: Path) -> Path:
    """Scripts named like every agent CLI that log their stdin, then act as the fake agent."""
    folder.mkdir()
    for name in AGENT_CLIS:
        script = folder / name
        script.write_text(
            "#!/bin/sh\n"
            f'input="$(cat)"\n'
            f'printf "%s\\n==CALL==\\n" "$input" >> "{log}"\n'
            f'printf "%s" "$input" | exec "{FAKE_AGENT}" "$@"\n',
            encoding="utf-8",
        )
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return folder / "fake-agent"


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    return Workspace.create(tmp_path)


def _env(space: Workspace, log: Path) -> dict[str, str]:
    bin_dir = space.root / "recording-bin"
    fake = _recorder(bin_dir, log)
    return space.env(
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', os.defpath)}",
        FAKE_AGENT_CLI_PATH=str(fake),
    )


def _validate(space: Workspace, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CALIPER), "validate", *args],
        cwd=space.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _calls(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [c for c in log.read_text(encoding="utf-8").split("==CALL==\n") if c.strip()]


def test_probe_flags_checks_that_pass_without_the_agent(space: Workspace) -> None:
    spec = space.spec(SPEC)
    log = space.root / "calls.log"
    done = _validate(space, _env(space, log), "--probe", str(spec))
    out = done.stdout
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert (
        f"{spec}:5: task 'lazy check': this assert passes without the agent doing anything: "
        "it measures nothing"
    ) in out
    assert f"{spec}:10: task 'real check': assert fails without the agent: out.txt was not" in out
    assert f"{spec}:18: task 'broken setup': setup exited with status 4" in out
    assert "task 'judged': expect: not probed" in out and "--judge-model" in out
    assert "trigger only" not in out  # activates: alone is exempt
    assert "flagged 2 checks" in done.stderr
    assert _calls(log) == []  # no agent CLI was started
    assert list(space.sandboxes.iterdir()) == []  # every probe sandbox was removed
    assert space.files_in_real_home() == []  # nothing touched the real home


def test_the_recorder_sees_a_real_run(space: Workspace) -> None:
    """Control for the test above: the recording CLIs do log when an agent runs."""
    spec = space.spec(SPEC)
    log = space.root / "calls.log"
    env = _env(space, log)
    done = space.run(spec, "--k", "1", "--judge-model", "fake", env=env)
    assert done.returncode == 0, done.stderr
    assert any("fake: write out.txt hello" in call for call in _calls(log))


def test_probe_json_and_clean_exit(space: Workspace) -> None:
    spec = space.spec(
        """\
        tasks:
          - name: real check
            prompt: "fake: write out.txt hello"
            assert: |
              from pathlib import Path
              assert Path("out.txt").exists(), "out.txt was not created"
        """
    )
    log = space.root / "calls.log"
    done = _validate(space, _env(space, log), "--probe", "--format", "json", str(spec))
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert data["probe_flagged"] == 0
    [finding] = data["specs"][0]["probe"]
    assert finding["status"] == "can_fail" and finding["line"] == 4
    assert finding["task"] == "real check" and finding["flagged"] is False
    assert _calls(log) == []


def test_probe_expect_with_judge_model_only_runs_the_judge(space: Workspace) -> None:
    spec = space.spec(
        """\
        tasks:
          - name: judge always passes
            prompt: "fake: say hi"
            expect: "anything goes. fake-judge: pass"
          - name: judge fails
            prompt: "fake: say hi"
            expect: "the agent said hi. fake-judge: fail"
        """
    )
    log = space.root / "calls.log"
    done = _validate(space, _env(space, log), "--probe", "--judge-model", "fake", str(spec))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "task 'judge always passes': this expect passes without the agent" in done.stdout
    assert "task 'judge fails': expect fails without the agent" in done.stdout
    calls = _calls(log)
    assert len(calls) == 2
    # Only the judge ran, and it was shown no agent output.
    assert all(LLM_JUDGE_MARKER in call for call in calls)
    assert not any("fake: say hi\n" in call.split(LLM_JUDGE_MARKER)[0] for call in calls)


def test_judge_model_without_probe_is_a_usage_error(space: Workspace) -> None:
    spec = space.spec(SPEC)
    done = _validate(space, space.env(), "--judge-model", "fake", str(spec))
    assert done.returncode == 2
    assert "--judge-model is used only with --probe" in done.stderr


def test_invalid_spec_is_not_probed(space: Workspace) -> None:
    spec = space.spec("tasks:\n  - name: x\n    prompt: y\n    asert: 'assert True'\n")
    log = space.root / "calls.log"
    done = _validate(space, _env(space, log), "--probe", str(spec))
    assert done.returncode == 2
    assert "run with no agent" not in done.stdout


def test_probe_flags_a_tools_check_that_only_forbids(space: Workspace) -> None:
    """`tools: [{not_called: …}]` alone passes with no agent; `called:` fails as it should."""
    spec = space.spec(
        """\
        tasks:
          - name: forbids only
            prompt: "fake: say hi"
            tools:
              - not_called: write
          - name: asks for a call
            prompt: "fake: say hi"
            tools:
              - called: shell
                input: "^git commit"
        """
    )
    done = _validate(space, _env(space, space.root / "calls.log"), "--probe", str(spec))
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        f"{spec}:4: task 'forbids only': this tools passes without the agent doing anything"
    ) in done.stdout
    assert (
        "task 'asks for a call': tools fails without the agent: shell with input /^git commit/ "
        "was never called"
    ) in done.stdout
