"""The executor seam: the scheduler talks only to an ExecutorSession; ``--executor``,
an executor's own ``--<id>-<name>`` flags, ``--max-concurrent BACKEND=N``."""

from __future__ import annotations

import collections
import subprocess
import sys
from types import SimpleNamespace

from caliper.plugin.executor import AttemptJob, ExecutorSession, FinishedAttempt
from caliper.results.models import AttemptRecord, Outcome
from caliper.runner.run.control import RunController
from caliper.runner.run.schedule import schedule
from caliper_fakeagent.harness import PLUGINS, Workspace

# -- the scheduler against a scripted session (no agent) -----------------------------------------


class ScriptedSession(ExecutorSession):
    """Finishes jobs in submission order with the outcome ``outcome_of(job)`` gives; counts
    how often the scheduler asked for room."""

    def __init__(self, workers, limits=None, outcome_of=lambda job: Outcome.PASS):
        self.workers = workers
        self.limits = limits or {}
        self.outcome_of = outcome_of
        self.running: collections.deque[AttemptJob] = collections.deque()
        self.submitted: list[AttemptJob] = []
        self.room_checks = 0

    def has_room(self, job):
        self.room_checks += 1
        if len(self.running) >= self.workers:
            return False
        same = sum(1 for j in self.running if j.backend_id == job.backend_id)
        return same < self.limits.get(job.backend_id, 1 << 30)

    def submit(self, job):
        self.running.append(job)
        self.submitted.append(job)

    def next_finished(self, timeout):
        job = self.running.popleft()
        record = AttemptRecord(
            task_name=job.task_name, attempt=job.number, outcome=self.outcome_of(job)
        )
        return FinishedAttempt(job=job, record=record)

    def in_flight(self):
        return len(self.running)

    def cancel(self):
        pass

    def close(self):
        pass


def _run(tasks, backend, *, k=3, fail_fast=0):
    return SimpleNamespace(
        spec=SimpleNamespace(tasks=[SimpleNamespace(name=name) for name in tasks]),
        options=SimpleNamespace(k=k, fail_fast=fail_fast),
        engine=SimpleNamespace(backend_id=backend),
    )


def _schedule(runs, workers, session, jobs):
    return schedule(runs, session, jobs, controller=RunController(), workers=workers)


def test_the_cost_per_finished_attempt_does_not_grow_with_the_jobs_waiting():
    n = 3000
    runs = {"": _run(["t"], "a", k=n)}
    session = ScriptedSession(workers=2)
    jobs = [AttemptJob("t", i, "", "a") for i in range(1, n + 1)]
    execution = _schedule(runs, 2, session, jobs)
    assert len(execution.attempts[""]["t"]) == n
    # a walk over the waiting jobs per finished attempt would be ~n²/2 = 4.5 million checks
    assert session.room_checks <= 3 * n


def test_a_backend_at_its_limit_does_not_hold_back_another_backends_jobs():
    runs = {"x": _run(["t"], "a", k=4), "y": _run(["t"], "b", k=4)}
    jobs = [AttemptJob("t", i, "x", "a") for i in range(1, 5)]
    jobs += [AttemptJob("t", i, "y", "b") for i in range(1, 5)]
    session = ScriptedSession(workers=3, limits={"a": 1})
    execution = _schedule(runs, 3, session, jobs)
    first = [(j.engine_key, j.number) for j in session.submitted[:3]]
    assert first == [("x", 1), ("y", 1), ("y", 2)]
    assert execution.attempts["x"]["t"] == [1, 2, 3, 4]
    assert execution.attempts["y"]["t"] == [1, 2, 3, 4]


def test_fail_fast_counts_each_engine_on_its_own():
    runs = {"x": _run(["t"], "a", k=5, fail_fast=2), "y": _run(["t"], "a", k=5, fail_fast=2)}
    jobs = [AttemptJob("t", i, key, "a") for key in ("x", "y") for i in range(1, 6)]

    def outcome_of(job):
        return Outcome.INFRA_ERROR if job.engine_key == "x" else Outcome.PASS

    session = ScriptedSession(workers=1, outcome_of=outcome_of)
    execution = _schedule(runs, 1, session, jobs)
    assert execution.attempts["x"]["t"] == [1, 2]
    assert execution.attempts["y"]["t"] == [1, 2, 3, 4, 5]
    assert execution.aborted == {"x": {"t"}, "y": set()}


# -- through the real caliper console script ------------------------------------------------------


def _most_at_once(log):
    """The most attempts running at the same time, from ``S <time>``/``E <time>`` lines."""
    events = sorted(
        (float(stamp), 0 if kind == "E" else 1)
        for kind, stamp in (line.split() for line in log.read_text().splitlines())
    )
    running = most = 0
    for _, starts in events:
        running += 1 if starts else -1
        most = max(most, running)
    return most


def test_max_concurrent_caps_a_backend_below_the_workers(tmp_path):
    """Each attempt logs its start and end; with a limit of 2 the first two wait (up to 5 s)
    for each other, so the test sees 2 at once, never more."""
    space = Workspace.create(tmp_path)
    log = tmp_path / "times.log"
    log.touch()
    step = (
        f"echo S $(date +%s.%N) >> {log}; i=0; "
        f"while [ $(grep -c S {log}) -lt 2 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; "
        f"sleep 0.5; echo E $(date +%s.%N) >> {log}"
    )
    spec = space.spec(f"""\
        tasks:
          - name: meet
            prompt: |
              fake: bash {step}
            assert: "assert True"
        """)
    run = space.run(spec, "--k", "4", "--workers", "4", "--max-concurrent", "fake=2")
    assert run.returncode == 0, run.stderr
    assert [a["outcome"] for a in run.attempts("meet")] == ["pass"] * 4
    assert _most_at_once(log) == 2


def test_a_plugin_executor_runs_the_attempts_with_its_own_flag(tmp_path):
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: hello
            prompt: "fake: say hi"
            assert: "assert True"
        """)
    log = tmp_path / "jobs.log"
    env = space.env(CALIPER_LOAD_PLUGINS=PLUGINS + ",inline")
    run = space.run(spec, "--k", "2", "--executor", "inline", "--inline-log", str(log), env=env)
    assert run.returncode == 0, run.stderr
    assert [a["outcome"] for a in run.attempts("hello")] == ["pass", "pass"]
    assert log.read_text().splitlines() == ["|fake|hello#1", "|fake|hello#2"]


def test_local_cannot_be_switched_off_by_caliper_load_plugins(tmp_path):
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: hello
            prompt: "fake: say hi"
            assert: "assert True"
        """)
    assert "local" not in PLUGINS.split(",")
    run = space.run(spec, "--k", "1", "--executor", "local")
    assert run.returncode == 0, run.stderr
    assert [a["outcome"] for a in run.attempts("hello")] == ["pass"]


def _refused(space, spec, *args):
    run = space.run(spec, *args)
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    assert run.results_path is None  # refused before any attempt
    return run.stderr


def test_an_unknown_executor_is_refused_listing_the_installed_ones(tmp_path):
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: hello
            prompt: "fake: say hi"
            assert: "assert True"
        """)
    stderr = _refused(space, spec, "--executor", "locl")
    assert "--executor 'locl'" in stderr
    assert "Did you mean 'local'?" in stderr
    assert "Installed executors: local" in stderr


def test_a_bad_max_concurrent_is_refused(tmp_path):
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: hello
            prompt: "fake: say hi"
            assert: "assert True"
        """)
    for value in ("fake=0", "fake", "fake=two", "=3"):
        stderr = _refused(space, spec, "--max-concurrent", value)
        assert f"--max-concurrent {value!r}: expected BACKEND=N" in stderr
    stderr = _refused(space, spec, "--max-concurrent", "fak=2")
    assert "no installed backend has that id. Did you mean 'fake'?" in stderr


def test_caliper_help_imports_no_executor():
    code = (
        "import sys\n"
        "from caliper.cli import main\n"
        "main(['--help'])\n"
        "print('LOADED', sorted(m for m in sys.modules if 'executor' in m))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert "LOADED []" in out.stdout, out.stdout + out.stderr


SIGNAL_STORM = """
import os, signal, threading, time
from caliper.default_plugins.local_executor import LocalExecutor
from caliper.plugin.executor import AttemptJob, FinishedAttempt, RunWork

release = threading.Event()

def run_here(job):
    release.wait(60)
    return FinishedAttempt(job=job, record=None)

work = RunWork(
    bundles={}, backend_of={}, run_here=run_here, stop_requested=lambda: False, workers=1
)
session = LocalExecutor().start(work, {})
session.submit(AttemptJob("t", 1))
signal.signal(signal.SIGUSR1, lambda *_: None)

def storm():
    for _ in range(3000):
        os.kill(os.getpid(), signal.SIGUSR1)
        time.sleep(0.0003)

threading.Thread(target=storm, daemon=True).start()
worst, end = 0.0, time.monotonic() + 2
while time.monotonic() < end:
    started = time.monotonic()
    assert session.next_finished(0.01) is None
    worst = max(worst, time.monotonic() - started)
release.set()
while session.next_finished(0.1) is None:
    pass
session.close()
print("WORST", worst)
"""


def test_waiting_for_a_finished_attempt_keeps_its_timeout_while_signals_arrive():
    """The scheduler waits in ``next_finished`` in the main thread, where Ctrl-C lands; a
    wait that a signal could hang (``SimpleQueue.get`` on CPython 3.11) stalled a stop."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", SIGNAL_STORM],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError("next_finished hung while signals arrived") from None
    assert done.returncode == 0, done.stderr
    worst = float(done.stdout.split("WORST")[1])
    assert worst < 1.0, f"a 0.01 s wait took {worst:.2f} s"


def test_an_executor_that_cannot_start_leaves_no_run_behind(tmp_path, monkeypatch):
    """An executor refusing the work (no cluster, a node without the CLI) is one setup error
    before any run id is claimed: no empty journal for `caliper list` to show as a killed run."""
    import textwrap

    import pytest

    import caliper
    import caliper_fakeagent.plugin as fake_plugin
    from caliper.default_plugins import assert_judge
    from caliper.errors import SetupError
    from caliper.plugin.executor import Executor
    from caliper.runner import RunOptions
    from caliper_fakeagent.harness import FAKE_AGENT

    class Refusing(Executor):
        id = "refusing"

        def start(self, work, settings):
            raise SetupError("node-b has no fake-agent CLI.", hint="Install it on node-b.")

    class RefusingPlugin:
        @caliper.hookimpl
        def register_executors(self, register):
            register(Refusing())

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("FAKE_AGENT_CLI_PATH", str(FAKE_AGENT))
    monkeypatch.chdir(tmp_path)
    spec = tmp_path / "demo.eval.yaml"
    spec.write_text(
        textwrap.dedent("""\
        tasks:
          - name: plain
            prompt: "fake: say hi"
            assert: "assert True"
        """),
        encoding="utf-8",
    )
    with pytest.raises(SetupError, match="node-b"):
        caliper.run(
            spec,
            RunOptions(model="fake", executor="refusing"),
            plugins=[fake_plugin, assert_judge, RefusingPlugin()],
            entry_points=False,
        )
    left = (
        sorted(p.name for p in (tmp_path / ".caliper").rglob("*"))
        if (tmp_path / ".caliper").exists()
        else []
    )
    assert not [name for name in left if name.endswith((".jsonl", ".json"))], left
