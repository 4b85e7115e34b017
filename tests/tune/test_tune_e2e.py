"""``caliper tune`` end to end: the real ``caliper`` script driving the real ``claude`` CLI
(and pi, an OpenAI-wire CLI) against the scripted model server, offline.

The scripted model loads the skill only when the advertised description holds a key phrase
(see ``tune_support``); the scripted proposer returns fixed candidates. The tuner must find
the description that fires on the should-trigger probes only, report the test-set gain, and
decline a candidate that only won on train by luck.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tune_support as ts

from caliper.testing.harness import find_agent_cli
from caliper.testing.model_server import ModelServer

pytestmark = pytest.mark.e2e

CLAUDE_LOAD = {"name": "Skill", "arguments": {"skill": ts.SKILL}}


def _claude(tmp_path: Path):
    cli = find_agent_cli("claude", tmp_path / "bin")
    if isinstance(cli, str):
        pytest.skip(cli)
    return cli


def _summary(project: Path) -> dict:
    found = sorted((project / ".caliper" / "tune" / ts.SKILL).glob("*/summary.json"))
    assert len(found) == 1, found
    return json.loads(found[0].read_text("utf-8"))


def test_claude_finds_the_precise_description(tmp_path: Path) -> None:
    cli = _claude(tmp_path)
    rules = [
        ts.proposer_rule(ts.ORIGINAL, ts.proposals(ts.EAGER, ts.PRECISE)),
        ts.proposer_rule(ts.PRECISE, ts.proposals(ts.LUCKY)),
    ]
    with ModelServer(ts.script(CLAUDE_LOAD, rules)) as server:
        project = tmp_path / "project"
        project.mkdir()
        skill = ts.skill_dir(project)
        probes = ts.probe_file(project)
        env = {
            "CLAUDE_CLI_PATH": str(cli.path),
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "sk-test",
        }
        run = ts.run_tune(
            tmp_path,
            cli,
            server,
            "claude-code",
            env,
            skill,
            "--probes",
            probes,
            "--k",
            "2",
            "--seed",
            "1",
            "--timeout",
            "60",
        )
        print(run.stdout)
        assert run.returncode == 0, run.describe()
        summary = _summary(project)
        assert summary["final_description"] == ts.PRECISE, run.describe()
