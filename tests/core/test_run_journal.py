"""The run journal and ``--resume`` through the real ``caliper`` script (issue 15).

A run killed with ``SIGKILL`` keeps every finished attempt in its journal; ``list`` shows it
as incomplete, ``report`` reads it, ``compare`` treats it as partial, and ``--resume`` ends
it with exactly k attempts per task and no duplicate.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from caliper_fakeagent.harness import CALIPER, Workspace

K = 3
SPEC = """\
    tasks:
      - name: alpha
        prompt: "fake: sleep 0.6\\nfake: write out.txt alpha\\nfake: say done alpha"
        assert: "import os; assert os.path.exists('out.txt')"
      - name: beta
        prompt: "fake: sleep 0.6\\nfake: say done beta"
        assert: "assert True"
      - name: gamma
        prompt: "fake: sleep 0.6\\nfake: say done gamma"
        assert: "assert True"
    """


def _caliper(space: Workspace, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CALIPER), *args],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _journals(space: Workspace) -> list[Path]:
    return sorted((space.root / ".caliper" / "results").glob("*/*.journal.jsonl"))


def _attempt_lines(journal: Path) -> int:
    lines = journal.read_text(encoding="utf-8").splitlines()
    return sum(1 for line in lines[1:] if line.startswith('{"attempt"'))


def _kill_mid_run(space: Workspace, spec: Path, at_least: int) -> Path:
    """Start a run, SIGKILL caliper once its journal holds ``at_least`` attempts."""
    process = space.start(spec, "--k", str(K), "--workers", "2", "--timeout", "60")
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = _journals(space)
            if found and _attempt_lines(found[0]) >= at_least:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the journal never filled")
        os.kill(process.pid, signal.SIGKILL)
        process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == -signal.SIGKILL
    (journal,) = _journals(space)
    final = journal.with_name(journal.name.replace(".journal.jsonl", ".json"))
    assert not final.exists(), "a killed run has no final file"
    return journal


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    return Workspace.create(tmp_path)


def test_sigkill_then_resume_ends_with_exactly_k_attempts(space: Workspace) -> None:
    spec = space.spec(SPEC)
    journal = _kill_mid_run(space, spec, at_least=2)
    kept = _attempt_lines(journal)
    assert 2 <= kept < 3 * K
    saved_lines = journal.read_text(encoding="utf-8").splitlines()[1 : kept + 1]

    listed = _caliper(space, "list", "demo", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["incomplete"] is True and row["partial"] is True
    assert row["attempts"] == kept
    text = _caliper(space, "list", "demo")
    assert "incomplete" in text.stdout and f"({kept} attempt" in text.stdout

    report = _caliper(space, "report", "demo", "--format", "json")
    assert report.returncode == 0, report.stderr
    data = json.loads(report.stdout)
    assert data["meta"]["incomplete"] is True
    assert data["meta"]["finished_at"] is None
    assert sum(len(t["attempts"]) for t in data["tasks"]) == kept
    assert "--resume" in data["meta"]["stop_reason"]

    run_id = row["run_id"]
    resumed = space.run(spec, "--resume", timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.results_path is not None
    assert resumed.results_path.name == f"{run_id}.json"
    assert not _journals(space), "the journal is removed once the run is saved"
    results = resumed.results
    assert results["meta"]["run_id"] == run_id
    assert len(results["meta"]["resumed_at"]) == 1
    assert not results["meta"]["partial"]
    for task in results["tasks"]:
        numbers = [a["attempt"] for a in task["attempts"]]
        assert numbers == list(range(1, K + 1)), (task["name"], numbers)
        assert all(a["outcome"] == "pass" for a in task["attempts"])
    # the attempts that survived the kill were carried over as they were, not run again
    by_key = {(a["task_name"], a["attempt"]): a for t in results["tasks"] for a in t["attempts"]}
    for line in saved_lines:
        attempt = json.loads(line)["attempt"]
        assert by_key[(attempt["task_name"], attempt["attempt"])] == attempt


def test_torn_last_line_is_tolerated_and_reported(space: Workspace) -> None:
    spec = space.spec(SPEC)
    journal = _kill_mid_run(space, spec, at_least=1)
    kept = _attempt_lines(journal)
    with journal.open("a", encoding="utf-8") as handle:
        handle.write('{"attempt": {"task_name": "beta", "attempt": 3, "outc')  # a torn write

    report = _caliper(space, "report", "demo")
    assert report.returncode == 0, report.stderr
    assert "cut off" in report.stdout
    data = json.loads(_caliper(space, "report", "demo", "--format", "json").stdout)
    assert sum(len(t["attempts"]) for t in data["tasks"]) == kept

    resumed = space.run(spec, "--resume", timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    for task in resumed.results["tasks"]:
        assert [a["attempt"] for a in task["attempts"]] == list(range(1, K + 1))


def test_compare_treats_an_incomplete_run_as_partial(space: Workspace) -> None:
    spec = space.spec(SPEC)
    done = space.run(spec, "--k", "1")
    assert done.returncode == 0, done.stderr
    journal = _kill_mid_run(space, spec, at_least=1)
    refused = _caliper(space, "compare", str(done.results_path), str(journal))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "partial" in refused.stderr


def test_resume_refuses_a_changed_spec_or_k_unless_forced(space: Workspace) -> None:
    spec = space.spec(SPEC)
    _kill_mid_run(space, spec, at_least=1)
    changed_k = space.run(spec, "--resume", "--k", "4")
    assert changed_k.returncode == 2
    assert "k differs (3 → 4)" in changed_k.stderr and "--force" in changed_k.stderr
    spec.write_text(spec.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    edited = space.run(spec, "--resume")
    assert edited.returncode == 2 and "the spec file changed" in edited.stderr
    assert _journals(space), "a refused resume leaves the journal as it was"
    forced = space.run(spec, "--resume", "--force", timeout=120)
    assert forced.returncode == 0, forced.stderr
    assert any("spec file changed" in f for f in forced.results["meta"]["forced"])
    for task in forced.results["tasks"]:
        assert [a["attempt"] for a in task["attempts"]] == list(range(1, K + 1))


def test_resume_continues_a_fail_fast_stopped_task(space: Workspace) -> None:
    counter = space.root / "counter"
    spec = space.spec(f"""\
        tasks:
          - name: shaky
            prompt: "fake: rate-limit-first 1 {counter}\\nfake: say ok"
            assert: "assert True"
        """)
    stopped = space.run(spec, "--k", "3", "--workers", "1", "--fail-fast", "1", "--retries", "0")
    task = stopped.task("shaky")
    assert task["aborted"] is True
    assert [a["outcome"] for a in task["attempts"]] == ["infra_error"]
    resumed = space.run(spec, "--resume", "--fail-fast", "1", "--retries", "0")
    assert resumed.returncode == 0, resumed.stderr
    task = resumed.task("shaky")
    assert task["aborted"] is False
    assert [a["outcome"] for a in task["attempts"]] == ["infra_error", "pass", "pass"]
    assert resumed.results["meta"]["run_id"] == stopped.results["meta"]["run_id"]


def test_a_killed_runs_journal_holds_no_secret(space: Workspace) -> None:
    secret = "s3cr3t-journal-token-77"
    spec = space.spec("""\
        mcp:
          weather:
            command: python3
            args: [server.py]
            env:
              API_TOKEN: ${CALIPER_TEST_TOKEN}
        tasks:
          - name: leaks
            prompt: |
              fake: mcp
            assert: "assert False, 'the config was wrong'"
          - name: slow
            prompt: "fake: sleep 30"
            assert: "assert True"
        """)
    env = space.env(CALIPER_TEST_TOKEN=secret)
    process = subprocess.Popen(
        [str(CALIPER), "run", str(spec), "--model", "fake", "--k", "1", "--workers", "2"],
        cwd=space.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = _journals(space)
            if found and _attempt_lines(found[0]) >= 1:
                break
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    (journal,) = _journals(space)
    text = journal.read_text(encoding="utf-8")
    assert _attempt_lines(journal) == 1
    assert secret not in text
    assert "[redacted]" in text


def test_appending_never_waits_for_the_disk_and_every_line_is_flushed(tmp_path, monkeypatch):
    # a group commit (issue 20): the line is written at once, fsync runs on a background
    # thread, one flush for all the lines written meanwhile, and close flushes the rest
    import threading

    from caliper.results import journal

    flushed = []
    real_fsync = journal.os.fsync

    def slow_fsync(fd):
        time.sleep(0.2)
        flushed.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(journal.os, "fsync", slow_fsync)
    path = tmp_path / "r.journal.jsonl"
    started = time.monotonic()
    writer = journal.JournalWriter.create(path, {"caliper_journal": 1, "meta": {}, "tasks": []})
    for n in range(10):
        writer.append({"event": "n", "n": n})
        assert path.read_text().count("\n") == n + 2  # in the file before append returns
    assert time.monotonic() - started < 1.0  # 11 synchronous flushes would take 2.2 s
    writer.close()
    assert 1 <= len(flushed) <= 4  # grouped, and the last lines flushed by close
    assert not [t for t in threading.enumerate() if t.name == "caliper-journal-flush"]


def test_a_failed_flush_is_reported_by_the_next_append(tmp_path, monkeypatch):
    from caliper.results import journal

    def failing_fsync(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(journal.os, "fsync", failing_fsync)
    writer = journal.JournalWriter.create(
        tmp_path / "r.journal.jsonl", {"caliper_journal": 1, "meta": {}, "tasks": []}
    )
    deadline = time.monotonic() + 5
    with pytest.raises(OSError, match="Input/output error"):
        while time.monotonic() < deadline:
            writer.append({"event": "x"})
            time.sleep(0.01)
    writer.close()
