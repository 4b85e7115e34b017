"""``caliper tune`` end to end: the real ``caliper`` script driving the real ``claude`` CLI
(and pi and codex, the two OpenAI wires) against the scripted model server, offline.

The scripted model loads the skill only when the advertised description holds a key phrase
(see ``tune_support``); the scripted proposer returns fixed candidates. The tuner must find
the description that fires on the should-trigger probes only, report the test-set gain, and
decline a candidate that only won on train by luck.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tune_support as ts

from caliper.testing.harness import AgentCli, find_agent_cli, run_caliper_process
from caliper.testing.model_server import ModelServer
from caliper.tune.proposer import PROPOSER_MARKER

pytestmark = pytest.mark.e2e

CLAUDE_LOAD = {"name": "Skill", "arguments": {"skill": ts.SKILL}}
PI_LOAD = {"name": "read", "arguments": {"path": f"{{{{skill_path:{ts.SKILL}}}}}"}}


def _cli(tmp_path: Path, name: str) -> AgentCli:
    cli = find_agent_cli(name, tmp_path / "bin")
    if isinstance(cli, str):
        pytest.skip(cli)
    return cli


def _claude_env(cli: AgentCli, server: ModelServer) -> dict[str, str]:
    return {
        "CLAUDE_CLI_PATH": str(cli.path),
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "sk-test",
    }


def _summary(project: Path) -> dict[str, Any]:
    found = sorted((project / ".caliper" / "tune" / ts.SKILL).glob("*/summary.json"))
    assert len(found) == 1, found
    return json.loads(found[0].read_text("utf-8"))


def _candidate(summary: dict[str, Any], description: str) -> dict[str, Any]:
    return next(c for c in summary["candidates"] if c["description"] == description)


def test_claude_finds_the_precise_description_and_writes_it(tmp_path: Path) -> None:
    """Eager fires everywhere (no net gain), precise fires on invoices only (accepted); the
    test set, never used to choose, shows the gain; --write changes one line only."""
    cli = _cli(tmp_path, "claude")
    rules = [
        ts.proposer_rule(ts.ORIGINAL, ts.proposals(ts.EAGER, ts.PRECISE)),
    ]
    with ModelServer(ts.script(CLAUDE_LOAD, rules)) as server:
        project = tmp_path / "project"
        project.mkdir()
        skill = ts.skill_dir(project)
        probes = ts.probe_file(project)
        run = ts.run_tune(
            tmp_path,
            cli,
            server,
            "claude-code",
            _claude_env(cli, server),
            skill,
            "--probes",
            probes,
            "--k",
            "2",
            "--seed",
            "1",
            "--timeout",
            "60",
            "--write",
        )
        proposer_calls = [r for r in server.requests if PROPOSER_MARKER in r.sent_text()]
    print(run.stdout)
    assert run.returncode == 0, run.describe()
    summary = _summary(project)
    assert summary["final_description"] == ts.PRECISE, run.describe()
    assert summary["split"] == {"seed": 1, "train": 6, "test": 4}
    eager, precise = _candidate(summary, ts.EAGER), _candidate(summary, ts.PRECISE)
    assert not eager["accepted"] and eager["train"]["recall"] == 1.0
    assert precise["accepted"] and precise["adjusted_p"] <= 0.05
    assert precise["train"]["accuracy"] == 1.0
    # once right on every train attempt there is nothing left to improve: no round 2
    assert "already right on every train attempt" in summary["stop_reason"]
    assert len(proposer_calls) == 1
    # test set: before → after, with intervals
    before, after = summary["test"]["before"], summary["test"]["after"]
    assert (before["recall"], after["recall"]) == (0.0, 1.0)
    assert (before["accuracy"], after["accuracy"]) == (0.5, 1.0)
    assert after["recall_interval"]["method"] in ("wilson-cc", "uninformative")
    assert after["accuracy_interval"]["low"] < 1.0
    assert "recall" in run.stdout and "0% [0–" in run.stdout and "→  100%" in run.stdout
    # the proposer saw the failures: every should-trigger train prompt, as a miss
    first = proposer_calls[0].sent_text()
    train = {
        p["prompt"]
        for p in json.loads(
            next((project / ".caliper" / "tune" / ts.SKILL).glob("*/split.json")).read_text("utf-8")
        )["train"]
        if p["should_trigger"]
    }
    assert train and all(json.dumps(p) in first for p in train)
    # --write: only the description line changed, every other byte kept
    expected = ts.SKILL_TEXT.replace(
        f"description: {ts.ORIGINAL}\n", f"description: {json.dumps(ts.PRECISE)}\n"
    )
    assert (skill / "SKILL.md").read_text("utf-8") == expected
    assert (skill / "reference.md").read_text("utf-8") == "VAT is 20 %.\n"
    # the measurements are ordinary runs: report and compare read them
    runs = summary["runs"]
    assert len(runs) == 5  # c0, c1, c2 on train; c0 and the winner on test
    env = _claude_env(cli, server)
    shown = run_caliper_process(
        "compare",
        before["run"],
        after["run"],
        home=tmp_path / "real-home",
        cwd=project,
        sandbox_parent=tmp_path / "s2",
        env=env,
    )
    assert shown.returncode == 0, shown.describe()
    report = run_caliper_process(
        "report",
        after["run"],
        home=tmp_path / "real-home",
        cwd=project,
        sandbox_parent=tmp_path / "s3",
        env=env,
    )
    assert report.returncode == 0 and ts.SKILL in report.stdout, report.describe()


def test_claude_declines_a_candidate_that_only_wins_on_train_by_luck(tmp_path: Path) -> None:
    """The lucky candidate loads the skill on two train attempts (+17 points on train); a
    tuner that keeps any higher train score would take it. The paired test says it is not
    supported, so the description stays, and nothing is written."""
    cli = _cli(tmp_path, "claude")
    rules = [ts.proposer_rule(ts.ORIGINAL, ts.proposals(ts.LUCKY))]
    with ModelServer(ts.script(CLAUDE_LOAD, rules)) as server:
        project = tmp_path / "project"
        project.mkdir()
        skill = ts.skill_dir(project)
        probes = ts.probe_file(project)
        run = ts.run_tune(
            tmp_path,
            cli,
            server,
            "claude-code",
            _claude_env(cli, server),
            skill,
            "--probes",
            probes,
            "--k",
            "2",
            "--seed",
            "1",
            "--timeout",
            "60",
            "--write",
        )
    print(run.stdout)
    assert run.returncode == 0, run.describe()
    summary = _summary(project)
    lucky = _candidate(summary, ts.LUCKY)
    baseline = _candidate(summary, ts.ORIGINAL)
    assert lucky["train"]["accuracy"] > baseline["train"]["accuracy"], "luck did not show"
    assert lucky["p_value"] > 0.05 and not lucky["accepted"]
    assert "not statistically supported" in lucky["note"]
    assert summary["final_description"] == ts.ORIGINAL and summary["winner"] is None
    assert "unchanged" in run.stdout
    assert (skill / "SKILL.md").read_text("utf-8") == ts.SKILL_TEXT


def test_pi_tunes_over_chat_completions_and_prints_the_diff(tmp_path: Path) -> None:
    """The same search through pi (OpenAI chat wire), pi also proposing, on six probes (pi
    starts slowly); without --write SKILL.md is untouched and the change is printed as a diff."""
    cli = _cli(tmp_path, "pi")
    rules = [ts.proposer_rule(ts.ORIGINAL, ts.proposals(ts.PRECISE))]
    with ModelServer(ts.script(PI_LOAD, rules)) as server:
        project = tmp_path / "project"
        project.mkdir()
        skill = ts.skill_dir(project)
        probes = ts.probe_file(project, per_kind=3)  # 2 + 2 train: one candidate needs p ≤ 1/36
        ts.configure_pi(tmp_path / "real-home", server.url)
        run = ts.run_tune(
            tmp_path,
            cli,
            server,
            "pi:fake-model",
            {"PI_CLI_PATH": str(cli.path)},
            skill,
            "--probes",
            probes,
            "--k",
            "2",
            "--iterations",
            "1",
            "--seed",
            "1",
            "--timeout",
            "60",
        )
    print(run.stdout)
    assert run.returncode == 0, run.describe()
    summary = _summary(project)
    assert summary["final_description"] == ts.PRECISE, run.describe()
    assert summary["test"]["after"]["accuracy"] == 1.0
    assert (skill / "SKILL.md").read_text("utf-8") == ts.SKILL_TEXT
    assert f"-description: {ts.ORIGINAL}" in run.stdout
    assert f"+description: {json.dumps(ts.PRECISE)}" in run.stdout


CODEX_LOAD = {"name": "exec_command", "arguments": {"cmd": f"cat {{{{skill_path:{ts.SKILL}}}}}"}}


def test_codex_tunes_over_the_responses_api(tmp_path: Path) -> None:
    """The same search through codex (OpenAI Responses wire), codex also proposing."""
    cli = _cli(tmp_path, "codex")
    rules = [ts.proposer_rule(ts.ORIGINAL, ts.proposals(ts.PRECISE))]
    with ModelServer(ts.script(CODEX_LOAD, rules)) as server:
        project = tmp_path / "project"
        project.mkdir()
        skill = ts.skill_dir(project)
        probes = ts.probe_file(project)
        env = ts.configure_codex(tmp_path / "real-home", server.url)
        run = ts.run_tune(
            tmp_path,
            cli,
            server,
            "codex",
            {"CODEX_CLI_PATH": str(cli.path), **env},
            skill,
            "--probes",
            probes,
            "--k",
            "2",
            "--iterations",
            "1",
            "--seed",
            "1",
            "--timeout",
            "60",
        )
    print(run.stdout)
    assert run.returncode == 0, run.describe()
    summary = _summary(project)
    assert summary["final_description"] == ts.PRECISE, run.describe()
    assert summary["test"]["after"]["recall"] == 1.0
