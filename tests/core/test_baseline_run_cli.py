"""``caliper run SPEC --baseline``: both arms in one session, through the real ``caliper``
script and the fake backend (whose agent runs a step only when a skill is installed:
``if-skill``/``unless-skill``). A needed skill helps, a skill that changes nothing shows no
detectable difference, a harmful one hurts (exit 1), the gate exits 3, and the pair survives
--k auto, --resume, retry, --shard + merge and several --model."""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from page_support import page_text

from caliper_fakeagent.harness import CALIPER, Workspace

HELPFUL = """\
    skills:
      - ./skills/writer
      - ./skills/other
    tasks:
      - name: needs the skill
        prompt: |
          fake: load writer
          fake: if-skill writer write out.txt yes
          fake: say done
        assert: "import os; assert os.path.exists('out.txt'), 'no out.txt'"
        activates: [writer]
    """

NO_OP = """\
    skills:
      - ./skills/writer
    tasks:
      - name: does it anyway
        prompt: |
          fake: write out.txt yes
          fake: say done
        assert: "import os; assert os.path.exists('out.txt')"
    """

HARMFUL = """\
    skills:
      - ./skills/writer
    tasks:
      - name: the skill breaks it
        prompt: |
          fake: unless-skill writer write out.txt yes
          fake: say done
        assert: "import os; assert os.path.exists('out.txt')"
    """


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    space = Workspace.create(tmp_path)
    space.skill("writer", "Writes out.txt when asked")
    space.skill("other", "Something unrelated")
    return space


def _caliper(space: Workspace, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CALIPER), *args],
        cwd=space.root,
        env=space.env(COLUMNS="200"),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _runs(space: Workspace, spec: str = "demo") -> list[dict[str, Any]]:
    folder = space.root / ".caliper" / "results" / spec
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


def _arms(space: Workspace) -> dict[str, dict[str, Any]]:
    runs = _runs(space)
    assert len(runs) == 2, [r["meta"]["run_id"] for r in runs]
    return {run["meta"]["baseline"]["arm"]: run for run in runs}


def test_a_needed_skill_is_reported_as_helping_and_both_arms_are_saved_tied(
    space: Workspace,
) -> None:
    spec = space.spec(HELPFUL)
    done = _caliper(space, "run", str(spec), "--model", "fake", "--baseline", "--k", "6")
    assert done.returncode == 0, done.stdout + done.stderr
    arms = _arms(space)
    control, full = arms["control"]["meta"], arms["full"]["meta"]
    assert control["baseline"]["id"] == full["baseline"]["id"]
    assert control["baseline"]["left_out"] == ["writer"] == full["baseline"]["left_out"]
    assert control["ablated"] == ["writer"] and full["ablated"] == []
    assert control["baseline"]["seed"] == full["baseline"]["seed"]
    outcomes = {
        arm: [a["outcome"] for a in run["tasks"][0]["attempts"]] for arm, run in arms.items()
    }
    assert outcomes == {"control": ["task_fail"] * 6, "full": ["pass"] * 6}
    assert "Verdict: writer helps" in done.stdout
    assert f"caliper compare --baseline {full['baseline']['id']}" in done.stdout
    # both activation scoreboards are shown side by side
    assert "Activation, without writer" in done.stdout and "Activation, full" in done.stdout


def test_attempts_of_the_two_arms_are_interleaved_in_pairs_in_time(space: Workspace) -> None:
    spec = space.spec(HELPFUL)
    done = _caliper(
        space, "run", str(spec), "--model", "fake", "--baseline", "--k", "8", "--workers", "1"
    )
    assert done.returncode == 0, done.stderr
    started = sorted(
        (attempt["started_at"], arm, attempt["attempt"])
        for arm, run in _arms(space).items()
        for attempt in run["tasks"][0]["attempts"]
    )
    assert all(stamp for stamp, _, _ in started)
    # one worker: each pair (attempt n of both arms) runs back to back
    for first, second in zip(started[0::2], started[1::2], strict=True):
        assert first[2] == second[2] and {first[1], second[1]} == {"control", "full"}
    # and a coin seeded by the saved seed says which arm of each pair goes first
    seed = _arms(space)["full"]["meta"]["baseline"]["seed"]
    coin = random.Random(seed)
    expected = []
    for _ in range(8):
        pair = ["control", "full"]
        coin.shuffle(pair)
        expected.append(pair[0])
    assert [first[1] for first in started[0::2]] == expected


def test_a_skill_that_changes_nothing_shows_no_detectable_difference(space: Workspace) -> None:
    spec = space.spec(NO_OP)
    done = _caliper(space, "run", str(spec), "--model", "fake", "--baseline", "--k", "5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "writer: no detectable difference" in done.stdout
    assert "smallest lift" in done.stdout or "No lift" in done.stdout


def test_require_improvement_and_min_lift_exit_3_when_the_lift_is_not_supported(
    space: Workspace,
) -> None:
    spec = space.spec(NO_OP)
    done = _caliper(
        space, "run", str(spec), "--model", "fake", "--baseline", "--k", "4",
        "--require-improvement", "--min-lift", "0.2",
    )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
    assert "--require-improvement: the skill's lift is not supported" in done.stderr
    assert "--min-lift 20 pp" in done.stderr
    # a skill that helps passes both
    space.spec(HELPFUL)
    done = _caliper(
        space, "run", str(spec), "--model", "fake", "--baseline", "--k", "6",
        "--require-improvement", "--min-lift", "0.2",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_skill_that_hurts_exits_1_as_compare_does(space: Workspace) -> None:
    spec = space.spec(HARMFUL)
    done = _caliper(space, "run", str(spec), "--model", "fake", "--baseline", "--k", "6")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Verdict: writer hurts" in done.stdout
    assert "with writer the success score dropped by more than noise explains" in done.stderr


def test_formats_json_markdown_html_and_junit(space: Workspace, tmp_path: Path) -> None:
    spec = space.spec(HELPFUL)
    done = _caliper(
        space, "run", str(spec), "--model", "fake", "--baseline", "--k", "4", "--format", "json",
        "--junit", str(tmp_path / "j.xml"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)  # stdout is only the JSON: the saved lines went to stderr
    (pair,) = data["pairs"]
    assert pair["verdict"] == "helps" and pair["left_out"] == ["writer"]
    assert pair["lift"] == pytest.approx(1.0)
    assert pair["lift_interval"]["low"] > 0
    assert "control arm saved to" in done.stderr
    junit = (tmp_path / "j.xml").read_text(encoding="utf-8")
    assert 'name="baseline: does writer help?"' in junit
    done = _caliper(
        space, "run", str(spec), "--model", "fake", "--baseline", "--k", "3", "--format", "markdown"
    )
    assert done.returncode == 0 and done.stdout.startswith("## Baseline: without writer")
    page = tmp_path / "pair.html"
    done = _caliper(
        space, "run", str(spec), "--model", "fake", "--baseline", "--k", "3", "--format", "html",
        "--page", str(page),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    html = page_text(page.read_text(encoding="utf-8"))
    assert 'id="baseline-verdict"' in html and str(space.root) not in html


def test_the_pair_page_has_both_arms_pages_beside_it(space: Workspace, tmp_path: Path) -> None:
    spec = space.spec(HELPFUL)
    assert (
        _caliper(space, "run", str(spec), "--model", "fake", "--baseline", "--k", "3").returncode
        == 0
    )
    arms = _arms(space)
    ident = arms["full"]["meta"]["baseline"]["id"]
    page = tmp_path / "site" / "pair.html"
    page.parent.mkdir()
    done = _caliper(space, "compare", "--baseline", ident, "--format", "html", "-o", str(page))
    assert done.returncode == 0, done.stderr
    html = page.read_text(encoding="utf-8")
    links = re.findall(r'<a class="run-page" data-side="(\w)" href="([^"]+)"', html)
    assert [side for side, _ in links] == ["a", "b"], links
    for (_, link), arm in zip(links, ("control", "full"), strict=True):
        assert link.startswith("pair.runs/") and not link.startswith("/"), link
        run_page = page.parent / link
        assert arms[arm]["meta"]["run_id"] in run_page.read_text(encoding="utf-8")
    assert "control <a" in html and "full <a" in html
    assert str(space.root) not in page_text(html) and str(tmp_path) not in page_text(html)
    assert "2 runs' report pages" in done.stderr
    shown = _caliper(space, "compare", "--baseline", ident, "--format", "html")
    assert shown.returncode == 0 and "run-page-command" in shown.stdout  # stdout: no folder
    assert sorted(p.name for p in (page.parent / "pair.runs").iterdir()) == sorted(
        f"{arms[arm]['meta']['run_id']}.html" for arm in ("control", "full")
    )


def test_compare_baseline_judges_the_saved_pair_again(space: Workspace) -> None:
    spec = space.spec(HELPFUL)
    assert (
        _caliper(space, "run", str(spec), "--model", "fake", "--baseline", "--k", "6").returncode
        == 0
    )
    ident = _arms(space)["full"]["meta"]["baseline"]["id"]
    done = _caliper(space, "compare", "--baseline", ident, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["pairs"][0]["verdict"] == "helps"
    listed = _caliper(space, "list", "demo")
    assert f"Baseline pair {ident}" in listed.stdout
    assert "baseline control" in listed.stdout and "baseline full" in listed.stdout
    rows = json.loads(_caliper(space, "list", "demo", "--format", "json").stdout)
    assert {row["baseline"]["arm"] for row in rows} == {"control", "full"}
    missing = _caliper(space, "compare", "--baseline", "no-such-pair")
    assert missing.returncode == 2 and "No saved run belongs to baseline" in missing.stderr


def test_k_auto_stops_a_task_once_the_difference_is_decided(space: Workspace) -> None:
    spec = space.spec(HELPFUL)
    done = _caliper(
        space, "run", str(spec), "--model", "fake", "--baseline", "--k", "auto", "--max-k", "30"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    arms = _arms(space)
    for run in arms.values():
        (task,) = run["tasks"]
        assert len(task["attempts"]) < 30  # stopped early: decided
        assert task["stop_reason"].startswith("decided: the skill helps")
        assert run["meta"]["adaptive"]["method"].startswith("paired anytime-valid")
    assert len(arms["control"]["tasks"][0]["attempts"]) == len(arms["full"]["tasks"][0]["attempts"])
    assert "Verdict: writer helps" in done.stdout


def test_resume_continues_both_arms_of_an_interrupted_pair(space: Workspace) -> None:
    spec = space.spec(
        """\
        skills:
          - ./skills/writer
        tasks:
          - name: slow
            prompt: |
              fake: sleep 0.4
              fake: if-skill writer write out.txt yes
              fake: say done
            assert: "import os; assert os.path.exists('out.txt')"
        """
    )
    process = subprocess.Popen(
        [str(CALIPER), "run", str(spec), "--model", "fake", "--baseline", "--k", "6",
         "--workers", "1"],
        cwd=space.root, env=space.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    folder = space.root / ".caliper" / "results" / "demo"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # both arms have a journal with an attempt in it
        journals = list(folder.glob("*.journal.jsonl")) if folder.is_dir() else []
        if len(journals) == 2 and all(j.read_text().count("\n") >= 3 for j in journals):
            break
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    before = {run["meta"]["baseline"]["arm"]: run["meta"]["run_id"] for run in _runs(space)}
    assert set(before) == {"control", "full"}
    done = _caliper(space, "run", str(spec), "--resume", "--workers", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    arms = _arms(space)
    assert {arm: run["meta"]["run_id"] for arm, run in arms.items()} == before  # same runs
    for arm, run in arms.items():
        assert len(run["tasks"][0]["attempts"]) == 6, arm
        assert run["meta"]["resumed_at"] and not run["meta"]["partial"]
    assert arms["control"]["meta"]["baseline"]["id"] == arms["full"]["meta"]["baseline"]["id"]
    assert "Verdict: writer helps" in done.stdout


def test_retry_of_an_arm_retries_the_pair_as_a_new_pair(space: Workspace) -> None:
    counter = space.root / "count"
    spec = space.spec(
        f"""\
        skills:
          - ./skills/writer
        tasks:
          - name: flaky start
            prompt: |
              fake: rate-limit-first 3 {counter}
              fake: if-skill writer write out.txt yes
              fake: say done
            assert: "import os; assert os.path.exists('out.txt')"
        """
    )
    first = _caliper(
        space, "run", str(spec), "--model", "fake", "--baseline", "--k", "4", "--retries", "0",
        "--workers", "1",
    )  # fmt: skip
    assert first.returncode == 0, first.stdout + first.stderr
    old = _arms(space)
    unusable = sum(
        a["outcome"] == "infra_error" for run in old.values() for a in run["tasks"][0]["attempts"]
    )
    assert unusable == 3
    done = _caliper(space, "retry", old["full"]["meta"]["run_id"])
    assert done.returncode == 0, done.stdout + done.stderr
    runs = _runs(space)
    assert len(runs) == 4
    new = [r for r in runs if r["meta"].get("derived_by") == "retry"]
    assert {r["meta"]["baseline"]["arm"] for r in new} == {"control", "full"}
    assert len({r["meta"]["baseline"]["id"] for r in new}) == 1
    assert {r["meta"]["parent_run"] for r in new} == {
        f"demo/{run['meta']['run_id']}" for run in old.values()
    }
    for run in new:
        assert all(a["outcome"] != "infra_error" for a in run["tasks"][0]["attempts"])
    assert "Verdict: writer" in done.stdout


def test_shards_of_a_baseline_merge_into_one_pair(space: Workspace) -> None:
    spec = space.spec(HELPFUL)
    for shard in ("1/2", "2/2"):
        done = _caliper(
            space, "run", str(spec), "--model", "fake", "--baseline", "--k", "6", "--shard", shard
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "not judged" in done.stdout
    shards = _runs(space)
    assert len(shards) == 4 and len({r["meta"]["baseline"]["id"] for r in shards}) == 1
    files = sorted(str(p) for p in (space.root / ".caliper" / "results" / "demo").glob("*.json"))
    merged = _caliper(space, "merge", *files)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    ident = shards[0]["meta"]["baseline"]["id"]
    done = _caliper(space, "compare", "--baseline", ident, "--require-improvement")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Verdict: writer helps" in done.stdout


def test_several_models_get_a_baseline_each(space: Workspace) -> None:
    spec = space.spec(HELPFUL)
    done = _caliper(
        space, "run", str(spec), "--model", "fake", "--model", "fake:fake-model-2",
        "--baseline", "--k", "4",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    runs = _runs(space)
    assert len(runs) == 4
    pairs = {(r["meta"]["baseline"]["engine"], r["meta"]["baseline"]["arm"]) for r in runs}
    assert pairs == {
        (engine, arm) for engine in ("fake", "fake:fake-model-2") for arm in ("control", "full")
    }
    assert done.stdout.count("Verdict: writer helps") == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--require-improvement",), "--require-improvement only applies with --baseline"),
        (("--baseline", "--output", "x.json"), "--output cannot be combined with --baseline"),
        (("--baseline=writr",), "Did you mean 'writer'?"),
        (("--baseline", "--ablate", "writer"), "--ablate already leaves it out of both arms"),
    ],
)
def test_misuse_is_a_usage_error_before_any_attempt(
    space: Workspace, args: tuple[str, ...], message: str
) -> None:
    spec = space.spec(HELPFUL)
    done = _caliper(space, "run", str(spec), "--model", "fake", *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert not (space.root / ".caliper" / "results" / "demo").exists() or not _runs(space)


def test_a_spec_with_nothing_to_leave_out_is_refused(space: Workspace) -> None:
    spec = space.spec('tasks:\n  - name: t\n    prompt: "fake: say hi"\n    assert: "pass"\n')
    done = _caliper(space, "run", str(spec), "--model", "fake", "--baseline")
    assert done.returncode == 2
    assert "declares no skill and no mcp: server" in done.stderr


def test_the_spec_may_come_after_a_bare_baseline_flag(space: Workspace) -> None:
    spec = space.spec(HELPFUL)
    done = _caliper(space, "run", "--model", "fake", "--k", "2", "--baseline", str(spec))
    assert done.returncode == 0, done.stdout + done.stderr
    assert {r["meta"]["baseline"]["left_out"][0] for r in _runs(space)} == {"writer"}


def test_resuming_one_arm_by_id_resumes_nothing_else_when_the_pair_is_complete(
    space: Workspace,
) -> None:
    spec = space.spec(HELPFUL)
    assert (
        _caliper(space, "run", str(spec), "--model", "fake", "--baseline", "--k", "6").returncode
        == 0
    )
    ident = _arms(space)["control"]["meta"]["run_id"]
    done = _caliper(space, "run", str(spec), "--resume", ident)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(_runs(space)) == 2  # the same two runs, nothing new
    assert "Verdict: writer helps" in done.stdout, done.stdout[-1500:]


def test_k_auto_pair_says_compares_p_values_are_fixed_k_in_every_format(
    space: Workspace, tmp_path: Path
) -> None:
    """compare's p-values assume a fixed k; a --k auto pair's verdict is the anytime-valid
    interval, and each format says so (a fixed-k pair does not)."""
    spec = space.spec(HELPFUL)
    auto = ("run", str(spec), "--model", "fake", "--baseline", "--k", "auto", "--max-k", "30")
    text = _caliper(space, *auto)
    assert text.returncode == 0, text.stderr
    assert "compare's p-values assume a fixed k" in " ".join(text.stdout.split())
    data = json.loads(_caliper(space, *auto, "--format", "json").stdout)
    assert data["pairs"][0]["sequential"]["p_values"].startswith("fixed-k")
    markdown = _caliper(space, *auto, "--format", "markdown").stdout
    assert "_--k auto: each task stopped by the paired anytime-valid rule" in markdown
    page = tmp_path / "auto.html"
    assert _caliper(space, *auto, "--format", "html", "--page", str(page)).returncode == 0
    assert 'id="baseline-sequential"' in page.read_text(encoding="utf-8")
    fixed = _caliper(space, "run", str(spec), "--model", "fake", "--baseline", "--k", "3")
    assert fixed.returncode == 0 and "assume a fixed k" not in " ".join(fixed.stdout.split())
    fixed_md = _caliper(
        space, "run", str(spec), "--model", "fake", "--baseline", "--k", "3", "--format", "markdown"
    ).stdout
    assert "anytime-valid rule" not in fixed_md
