"""docs/ci.md's GitHub Actions workflows parse, and every ``caliper`` command in them exists
with the flags it uses (checked against the real ``caliper COMMAND --help``)."""

from __future__ import annotations

import re
import shlex
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from caliper_fakeagent.harness import CALIPER

DOC = Path(__file__).parents[2] / "docs" / "ci.md"


def _workflows() -> list[dict[str, Any]]:
    blocks = re.findall(r"^```yaml\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.M | re.S)
    return [yaml.safe_load(block) for block in blocks if "jobs:" in block]


def _caliper_commands(workflow: dict[str, Any]) -> list[list[str]]:
    commands = []
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            for line in str(step.get("run", "")).splitlines():
                line = line.split(">>")[0].split("||")[0].strip()
                if line.startswith("caliper "):
                    commands.append(shlex.split(line))
    return commands


@cache
def _help(command: str) -> str:
    done = subprocess.run(
        [str(CALIPER), command, "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"`caliper {command} --help` failed: {done.stderr}"
    return done.stdout


def test_the_doc_has_both_workflows() -> None:
    names = [w["name"] for w in _workflows()]
    assert names == ["skill eval", "skill eval (sharded)"]


@pytest.mark.parametrize("workflow", _workflows(), ids=lambda w: w["name"])
def test_every_caliper_command_and_flag_exists(workflow: dict[str, Any]) -> None:
    commands = _caliper_commands(workflow)
    assert commands
    for argv in commands:
        text = _help(argv[1])
        for arg in argv[2:]:
            if arg.startswith("--"):
                assert re.search(rf"(^|[\s,]){re.escape(arg)}\b", text, re.M), (argv, arg)


def test_the_sharded_workflow_runs_every_shard_then_merges() -> None:
    workflow = next(w for w in _workflows() if w["name"] == "skill eval (sharded)")
    shard, merge = workflow["jobs"]["shard"], workflow["jobs"]["merge"]
    count = int(workflow["env"]["SHARDS"])
    assert shard["strategy"]["matrix"]["shard"] == list(range(1, count + 1))
    assert shard["strategy"]["fail-fast"] is False
    runs = [c for c in _caliper_commands({"jobs": {"s": shard}}) if c[1] == "run"]
    assert runs and runs[0][runs[0].index("--shard") + 1] == "${{ matrix.shard }}/$SHARDS"
    upload = next(s for s in shard["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == ".caliper/results/"
    assert upload["with"]["include-hidden-files"] is True
    assert merge["needs"] == "shard"
    download = next(s for s in merge["steps"] if "download-artifact" in s.get("uses", ""))
    assert download["with"]["pattern"] == "caliper-shard-*"
    steps = [c[1] for c in _caliper_commands({"jobs": {"m": merge}})]
    assert steps.index("merge") < steps.index("report") and "compare" in steps
