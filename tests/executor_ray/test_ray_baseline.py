"""``caliper run SPEC --baseline --executor ray``: both arms' attempts run on the real local
Ray cluster in one session (the fake agent on both nodes, which writes the file only when the
skill is installed on the node), the pair is saved tied and judged at the end."""

from __future__ import annotations

import json

import pytest

from caliper_fakeagent.harness import PLUGINS, Workspace

# the session's cluster fixtures provision the pinned claude on both nodes
pytestmark = pytest.mark.e2e


def test_a_baseline_runs_both_arms_on_the_cluster(cluster, lab, tmp_path) -> None:
    space = Workspace.create(tmp_path / "project")
    space.skill("writer", "Writes out.txt when asked")
    spec = space.spec(
        """\
        skills:
          - ./skills/writer
        tasks:
          - name: needs the skill
            prompt: |
              fake: if-skill writer write out.txt yes
              fake: say done
            assert: "import os; assert os.path.exists('out.txt')"
        """
    )
    ray = ["--executor", "ray", "--ray-address", cluster.address, "--workers", "2"]
    env = space.env(CALIPER_LOAD_PLUGINS=f"{PLUGINS},ray", COLUMNS="200")
    done = space.run(spec, "--baseline", "--k", "6", "--format", "json", *ray, env=env, timeout=240)
    assert done.returncode == 0, done.stderr
    (pair,) = json.loads(done.stdout)["pairs"]
    assert pair["verdict"] == "helps", pair
    folder = space.root / ".caliper" / "results" / "demo"
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in folder.glob("*.json")]
    assert {r["meta"]["baseline"]["arm"] for r in runs} == {"control", "full"}
    assert len({r["meta"]["baseline"]["id"] for r in runs}) == 1
    for run in runs:
        assert all(a["started_at"] for a in run["tasks"][0]["attempts"])
