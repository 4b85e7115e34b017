"""``--resume`` and the journal with ``--executor ray``: the driver journals every attempt as it
streams back, so a run stopped with Ctrl-C continues on the cluster with only its missing
attempts (the real ``caliper`` command, the fake agent on both nodes)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from caliper_fakeagent.harness import PLUGINS, Workspace

# the session's cluster fixtures provision the pinned claude on both nodes
pytestmark = pytest.mark.e2e


def _journal_tasks(space: Workspace) -> list[str]:
    names = []
    for path in (space.root / ".caliper" / "results").rglob("*.journal.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            name = entry.get("task_name") or entry.get("attempt", {}).get("task_name")
            if name:
                names.append(name)
    return names


def test_a_stopped_ray_run_resumes_with_only_its_missing_attempts(
    cluster, lab, tmp_path: Path
) -> None:
    space = Workspace.create(tmp_path / "project")
    scenario = tmp_path / "scenario.txt"
    scenario.write_text("fake: sleep 600\n")
    spec = space.spec(
        f"""\
        tasks:
          - name: quick
            prompt: "fake: say hi"
            assert: "assert True"
          - name: gated
            prompt: "fake: say start"
            setup: "cat {scenario} > fake-scenario.txt"
            assert: "assert True"
        """
    )
    ray = ["--executor", "ray", "--ray-address", cluster.address, "--workers", "2"]
    env = space.env(CALIPER_LOAD_PLUGINS=f"{PLUGINS},ray")
    process = space.start(spec, "--k", "2", "--retries", "0", "--timeout", "900", *ray, env=env)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and _journal_tasks(space).count("quick") < 2:
        time.sleep(0.2)
    time.sleep(2)  # the gated attempts are running (sleeping) on the nodes now
    process.send_signal(signal.SIGINT)
    stopped = space.finish(process, timeout=90)
    assert stopped.returncode == 130, stopped.stderr
    first = stopped.results
    assert first["meta"]["partial"] is True
    assert {t["name"]: len(t["attempts"]) for t in first["tasks"]} == {"quick": 2, "gated": 0}

    scenario.write_text("fake: say done\n")  # the spec itself is unchanged
    resumed = space.run(spec, "--resume", "--retries", "0", *ray, env=env, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    final = resumed.results
    assert final["meta"]["run_id"] == first["meta"]["run_id"]
    assert final["meta"]["partial"] is False
    outcomes = {t["name"]: sorted(a["outcome"] for a in t["attempts"]) for t in final["tasks"]}
    assert outcomes == {"quick": ["pass", "pass"], "gated": ["pass", "pass"]}
