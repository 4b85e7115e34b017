"""Attempt isolation: sandbox HOME and env, setup/cleanup, extra_path, real home untouched."""

from __future__ import annotations

import json
import os
import stat

from caliper.plugin.sandbox import make_sandbox, minimal_env, remove_sandbox
from caliper_fakeagent.harness import Workspace


def test_sandbox_layout_and_minimal_env(tmp_path, monkeypatch):
    monkeypatch.setenv("CALIPER_TMPDIR", str(tmp_path / "boxes"))
    monkeypatch.setenv("SOME_SECRET", "do-not-leak")
    (tmp_path / "bin").mkdir()
    sandbox = make_sandbox(spec_dir=tmp_path, extra_path=["./bin"])
    try:
        assert sandbox.root.parent == tmp_path / "boxes"
        for folder in (sandbox.home, sandbox.workdir, sandbox.private):
            assert folder.is_dir() and folder.parent == sandbox.root
        assert stat.S_IMODE(sandbox.private.stat().st_mode) == 0o700
        env = sandbox.base_env
        assert set(env) == {"PATH", "LANG", "LC_ALL", "TERM", "HOME", "TMPDIR"}
        assert env["HOME"] == str(sandbox.home)
        assert env["TERM"] == "dumb"
        assert env["TMPDIR"].startswith(str(sandbox.root))
        assert env["PATH"].split(os.pathsep)[0] == str(tmp_path / "bin")
        assert sandbox.real_home == type(sandbox.real_home)(os.environ["HOME"])
    finally:
        remove_sandbox(sandbox)
    assert not sandbox.root.exists()


def test_private_folder_is_created_only_when_asked_for(tmp_path):
    # most attempts write nothing there; each folder is an inode on the temp folder's disk
    sandbox = make_sandbox(spec_dir=tmp_path, parent=tmp_path)
    try:
        assert sorted(p.name for p in sandbox.root.iterdir()) == ["home", "tmp", "work"]
        old_umask = os.umask(0o077)
        try:
            private = sandbox.private
        finally:
            os.umask(old_umask)
        assert private == sandbox.root / "private" and private.is_dir()
        assert stat.S_IMODE(private.stat().st_mode) == 0o700
        assert sandbox.private == private  # asked again: the same folder, nothing raised
    finally:
        remove_sandbox(sandbox)


def test_remove_sandbox_handles_read_only_files(tmp_path):
    sandbox = make_sandbox(spec_dir=tmp_path, parent=tmp_path)
    locked = sandbox.workdir / "locked"
    locked.mkdir()
    (locked / "file").write_text("x")
    locked.chmod(0o500)
    remove_sandbox(sandbox)
    assert not sandbox.root.exists()


def test_minimal_env_defaults_locale():
    env = minimal_env(
        home=__import__("pathlib").Path("/h"),
        tmpdir=__import__("pathlib").Path("/t"),
        environ={"PATH": "/usr/bin"},
    )
    assert env["LC_ALL"] == "C.UTF-8" and env["PATH"] == "/usr/bin"


def test_agent_sees_only_the_sandbox(tmp_path):
    space = Workspace.create(tmp_path)
    (space.root / "tools").mkdir()
    tool = space.root / "tools" / "helper-tool"
    tool.write_text("#!/bin/sh\necho helper-ran\n")
    tool.chmod(0o755)
    spec = space.spec("""\
        sandbox:
          extra_path: [./tools]
        tasks:
          - name: looks around
            prompt: |
              fake: bash echo "$HOME|$TMPDIR|$PWD|${SOME_SECRET:-none}" > where.txt
              fake: bash echo scribble > ~/scribble.txt
              fake: bash helper-tool > tool.txt
            assert: |
              import json, os
              from pathlib import Path
              home, tmp, cwd, secret = Path("where.txt").read_text().strip().split("|")
              Path(os.environ["REPORT"]).write_text(json.dumps(
                  {"home": home, "tmp": tmp, "cwd": cwd, "secret": secret,
                   "tool": Path("tool.txt").read_text().strip()}))
        """)
    report = tmp_path / "report.json"
    run = space.run(spec, "--k", "1", env=space.env(SOME_SECRET="leak", REPORT=str(report)))
    assert run.returncode == 0, run.stderr
    (attempt,) = run.attempts("looks around")
    assert attempt["outcome"] == "pass", attempt
    seen = json.loads(report.read_text())
    assert seen["home"].startswith(str(space.sandboxes))
    assert seen["tmp"].startswith(str(space.sandboxes))
    assert seen["cwd"].startswith(str(space.sandboxes))
    assert seen["secret"] == "none"
    assert seen["tool"] == "helper-ran"
    assert space.files_in_real_home() == []
    assert list(space.sandboxes.iterdir()) == []


def test_failed_setup_skips_the_agent_and_cleanup_still_runs(tmp_path):
    space = Workspace.create(tmp_path)
    marks = tmp_path / "marks"
    marks.mkdir()
    spec = space.spec(f"""\
        tasks:
          - name: broken setup
            setup: echo preparing; echo no database >&2; exit 4
            cleanup: echo cleaned >> {marks}/cleanup-broken
            prompt: "fake: bash touch {marks}/agent-ran"
            assert: "assert True"
          - name: good setup
            setup: 'echo "fake: say from scenario" > fake-scenario.txt'
            cleanup: echo cleaned >> {marks}/cleanup-good
            prompt: "do it"
            assert: "assert True"
          - name: crashing agent
            cleanup: echo cleaned >> {marks}/cleanup-crash
            prompt: "fake: exit 9"
            assert: "assert True"
          - name: slow setup
            setup: sleep 20
            prompt: "fake: say hi"
            assert: "assert True"
        """)
    run = space.run(spec, "--k", "2", "--setup-timeout", "1", "--retries", "0")
    assert run.returncode == 0, run.stderr
    broken = run.attempts("broken setup")
    assert [a["outcome"] for a in broken] == ["infra_error", "infra_error"]
    assert all(a["setup_failed"] for a in broken)
    assert "exited with status 4" in broken[0]["reason"]
    assert "no database" in broken[0]["reason"]
    assert not (marks / "agent-ran").exists()
    assert (marks / "cleanup-broken").read_text().count("cleaned") == 2
    good = run.attempts("good setup")
    assert [a["outcome"] for a in good] == ["pass", "pass"]
    assert good[0]["final_answer"] == "from scenario"
    assert (marks / "cleanup-good").read_text().count("cleaned") == 2
    assert (marks / "cleanup-crash").read_text().count("cleaned") == 2
    slow = run.attempts("slow setup")
    assert all(a["setup_failed"] and "timed out after 1s" in a["reason"] for a in slow)


def test_assert_runs_with_the_agents_home_and_path(tmp_path):
    """Regression: assertions ran with the caliper process's real HOME, so a check on a file the
    agent wrote under ~ looked in the wrong place."""
    ws = Workspace.create(tmp_path)
    (tmp_path / "tools").mkdir()
    spec = ws.spec(
        """
        sandbox:
          extra_path: [./tools]
        tasks:
          - name: note in home
            prompt: |
              fake: bash echo hi > "$HOME/note.txt"
              fake: say done
            assert: |
              import os
              from pathlib import Path
              assert (Path.home() / "note.txt").read_text().strip() == "hi", Path.home()
              assert os.environ["PATH"].split(os.pathsep)[0].endswith("tools")
        """
    )
    run = ws.run(spec, "--k", "1")
    attempt = run.attempts("note in home")[0]
    assert attempt["outcome"] == "pass", attempt
    assert not (ws.home / "note.txt").exists()


def _remover_thread():  # type: ignore[no-untyped-def]
    import threading

    found = [t for t in threading.enumerate() if t.name == "caliper-sandbox-removal"]
    return found[0] if found else None


def test_background_removals_in_a_row_share_one_thread(tmp_path):
    """Attempts end every few milliseconds: the removal thread waits a moment for the next
    sandbox instead of a new thread being started for each one (issue 20), and ends at once
    when :func:`finish_removals` is called."""
    import time

    from caliper.plugin.sandbox import finish_removals

    boxes = [make_sandbox(spec_dir=tmp_path, parent=tmp_path) for _ in range(3)]
    threads = []
    for box in boxes:
        remove_sandbox(box, later=True)
        threads.append(_remover_thread())
        time.sleep(0.01)  # the previous removal is done by now
    assert threads[0] is not None
    assert all(t is threads[0] for t in threads)
    finish_removals()
    assert all(not box.root.exists() for box in boxes)
    threads[0].join(timeout=1)
    assert not threads[0].is_alive()
