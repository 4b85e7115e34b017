"""``caliper.run(spec, options, plugins=[...])``: a run in this process with plugin objects
passed in, nothing installed (the fake backend's real subprocess agent does the attempts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

import caliper
import caliper_fakeagent.plugin as fake_plugin
from caliper.plugin.judge import Judge, JudgeContext, Verdict
from caliper.runner import RunOptions
from caliper_fakeagent.harness import FAKE_AGENT
from caliper_fakeagent.plugin import FakeBackend


class SaysJudge(Judge):
    """``says: TEXT``: the final answer contains TEXT."""

    key = "says"
    summary = "the final answer contains the text"

    def check(self, context: JudgeContext) -> Verdict:
        answer = context.attempt.final_answer or ""
        if context.value in answer:
            return Verdict(passed=True)
        return Verdict(passed=False, reason=f"the answer does not say {context.value!r}")


class JudgePlugin:
    """A plugin object (not a module, not installed) registering the ``says`` judge."""

    @caliper.hookimpl
    def register_judges(self, register):
        register(SaysJudge())


class LimitedFake(FakeBackend):
    """The fake backend under another id, declaring a default limit of one attempt at once."""

    id = "limited"
    aliases = ()
    default_max_concurrent = 1


class LimitedPlugin:
    @caliper.hookimpl
    def register_backends(self, register):
        register(LimitedFake())


@pytest.fixture
def project(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "sandboxes").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CALIPER_TMPDIR", str(tmp_path / "sandboxes"))
    monkeypatch.setenv("FAKE_AGENT_CLI_PATH", str(FAKE_AGENT))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _spec(folder, text):
    path = folder / "demo.eval.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_a_run_with_an_injected_backend_and_judge_and_no_entry_points(project):
    spec = _spec(
        project,
        """\
        tasks:
          - name: greets
            prompt: "fake: say hello world"
            says: hello
          - name: waves
            prompt: "fake: say hello world"
            says: goodbye
        """,
    )
    ending = caliper.run(
        spec,
        RunOptions(k=2, model="fake"),
        plugins=[fake_plugin, JudgePlugin()],
        entry_points=False,
    )
    assert ending.exit_code == 0 and ending.problem() is None
    by_task = {task.name: task for task in ending.results.tasks}
    assert [a.outcome.value for a in by_task["greets"].attempts] == ["pass", "pass"]
    assert [a.outcome.value for a in by_task["waves"].attempts] == ["task_fail", "task_fail"]
    assert by_task["waves"].attempts[0].reason == "says: the answer does not say 'goodbye'"
    saved = json.loads(ending.saved_to.read_text(encoding="utf-8"))
    assert saved["meta"]["backend"] == "fake" and saved["meta"]["k"] == 2
    assert ending.saved_to.parent == project / ".caliper" / "results" / "demo"


def test_without_entry_points_an_installed_judge_is_not_there(project):
    spec = _spec(
        project,
        """\
        tasks:
          - name: greets
            prompt: "fake: say hello"
            assert: "assert True"
        """,
    )
    with pytest.raises(caliper.errors.SpecError) as info:
        caliper.run(spec, RunOptions(model="fake"), plugins=[fake_plugin], entry_points=False)
    assert "assert" in info.value.render()


def test_a_backends_default_max_concurrent_limits_its_attempts(project):
    log = project / "times.log"
    log.touch()
    step = f"echo S $(date +%s.%N) >> {log}; sleep 0.5; echo E $(date +%s.%N) >> {log}"
    spec = _spec(
        project,
        f"""\
        tasks:
          - name: slow
            prompt: |
              fake: bash {step}
            says: ""
        """,
    )
    ending = caliper.run(
        spec,
        RunOptions(k=3, workers=3, model="limited"),
        plugins=[LimitedPlugin(), JudgePlugin()],
        entry_points=False,
    )
    assert ending.exit_code == 0, ending.problem()
    events = sorted(
        (float(stamp), kind == "S")
        for kind, stamp in (line.split() for line in log.read_text().splitlines())
    )
    running = most = 0
    for _, starts in events:
        running += 1 if starts else -1
        most = max(most, running)
    assert len(events) == 6 and most == 1


AFTER_A_RUN = """\
import ctypes, json, subprocess, sys, time
import caliper, caliper_fakeagent.plugin as fake_plugin
from caliper.default_plugins import assert_judge
from caliper.system.process import run_process
from caliper.runner import RunOptions

ending = caliper.run(sys.argv[1], RunOptions(k=1, model="fake"),
                     plugins=[fake_plugin, assert_judge], entry_points=False)
flag = ctypes.c_int(-1)
ctypes.CDLL(None).prctl(37, ctypes.byref(flag), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
own = subprocess.Popen(["sleep", "30"])
time.sleep(0.2)
run_process(["/bin/true"], env={"PATH": "/usr/bin:/bin"}, cwd=".", timeout=10)
alive = own.poll() is None
own.kill()
print(json.dumps({"code": ending.exit_code, "subreaper": flag.value, "own_alive": alive}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="child subreapers are Linux's")
def test_after_an_in_process_run_the_callers_own_children_are_left_alone(project):
    """caliper.run made the calling process a child subreaper for good, so the next
    run_process it called swept the caller's own children (its `sleep` was killed). Run in a
    fresh interpreter: this pytest process may be a subreaper already."""
    spec = _spec(
        project,
        """\
        tasks:
          - name: plain
            prompt: "fake: say hi"
            assert: "assert True"
        """,
    )
    script = project / "after_a_run.py"
    script.write_text(AFTER_A_RUN, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(spec)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen == {"code": 0, "subreaper": 0, "own_alive": True}


def test_an_in_process_run_leaves_the_callers_children_and_process_handling_alone(project):
    """``caliper.run`` in a program that has children of its own: a child the caller had
    before the run survives it, and after the run caliper no longer sweeps or reaps the
    caller's children (it stopped being their subreaper)."""
    import subprocess

    from caliper.system.process import run_process

    spec = _spec(
        project,
        """\
        tasks:
          - name: greets
            prompt: "fake: say hello"
            says: hello
        """,
    )
    before = subprocess.Popen(["sleep", "30"])
    try:
        ending = caliper.run(
            spec,
            RunOptions(model="fake"),
            plugins=[fake_plugin, JudgePlugin()],
            entry_points=False,
        )
        assert ending.exit_code == 0, ending.problem()
        assert before.poll() is None, "the run killed a child its caller had before it"
        after = subprocess.Popen(["sleep", "30"])
        quick = subprocess.Popen(["sh", "-c", "exit 7"])
        try:
            time.sleep(0.2)  # `quick` is a zombie now, for its parent (this test) to collect
            done = run_process(["/bin/true"], env={"PATH": os.defpath}, cwd=project, timeout=10)
            assert done.returncode == 0
            assert after.poll() is None, "a process started after the run killed the caller's child"
            assert quick.wait(timeout=5) == 7, "the caller's child's exit status was taken"
        finally:
            after.kill()
            after.wait()
    finally:
        before.kill()
        before.wait()
