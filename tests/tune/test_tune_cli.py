"""``caliper tune`` through the real console script with the fake backend: probe formats,
bad input (file:line messages, exit 2), the budget, and the saved session."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from caliper_fakeagent.harness import CALIPER, FAKE_AGENT, Workspace

SKILL = "invoice-totals"
LOAD = f"fake: load {SKILL}"


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    if not FAKE_AGENT.exists():
        pytest.skip(f"the fake agent is not installed at {FAKE_AGENT}")
    space = Workspace.create(tmp_path)
    (tmp_path / ".caliper").mkdir()
    space.skill(SKILL, "Totals invoices")
    return space


def tune(
    space: Workspace, *args: str, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CALIPER), "tune", str(space.root / "skills" / SKILL), "--model", "fake", *args],
        cwd=space.root,
        env=space.env(**(env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def summary(space: Workspace) -> dict[str, Any]:
    (found,) = (space.root / ".caliper" / "tune" / SKILL).glob("*/summary.json")
    return json.loads(found.read_text("utf-8"))


def write(space: Workspace, name: str, text: str) -> Path:
    path = space.root / name
    path.write_text(text, encoding="utf-8")
    return path


def trigger_eval(space: Workspace, right: bool = True) -> Path:
    """skill-creator's trigger-eval JSON; with ``right`` the fake agent gets every one right."""
    items = [{"query": f"{LOAD}\nfake: say totalled {i}", "should_trigger": True} for i in range(3)]
    if not right:
        items[0]["query"] = "fake: say I will not load anything"
    items += [{"query": f"fake: say no skill {i}", "should_trigger": False} for i in range(3)]
    return write(space, "trigger-eval.json", json.dumps(items))


def test_trigger_eval_file_already_right_stops_and_reports_the_test_set(space: Workspace) -> None:
    done = tune(space, "--probes", str(trigger_eval(space)), "--k", "2", "--seed", "3")
    assert done.returncode == 0, done.stderr
    data = summary(space)
    assert data["split"] == {"seed": 3, "train": 4, "test": 2}
    assert "already right on every train attempt" in data["stop_reason"]
    assert data["winner"] is None and data["budget"]["attempts"] == 4 * 2 + 2 * 2
    assert data["budget"]["proposer_calls"] == 0
    after = data["test"]["after"]
    assert after["recall"] == 1.0 and after["precision"] == 1.0 and after["accuracy"] == 1.0
    (split_file,) = (space.root / ".caliper" / "tune" / SKILL).glob("*/split.json")
    split = json.loads(split_file.read_text("utf-8"))
    # stratified: each side holds both kinds of probe
    for side in ("train", "test"):
        assert {p["should_trigger"] for p in split[side]} == {True, False}
    # the runs are ordinary saved runs under the results store
    for run in data["runs"]:
        assert "/.caliper/results/tune-invoice-totals-" in run and Path(run).is_file()


def test_spec_probes_use_the_spec_neighbourhood_and_exact_sets(space: Workspace) -> None:
    """Probes from a spec: its competitor is installed, exact activates: sets are scored."""
    space.skill("changelog-writer")
    spec = space.spec(
        f"""
        skills:
          - ./skills/{SKILL}
          - ./skills/changelog-writer
        sandbox:
          extra_path: [./tools]
          forbidden_files: ["secret-answers"]
        mcp:
          ledger:
            command: ledger-server
            env:
              TOKEN: ${{LEDGER_TOKEN}}
        tasks:
          - name: totals
            prompt: "{LOAD}"
            activates: [{SKILL}]
          - name: totals again
            prompt: "{LOAD}"
            activates: [{SKILL}]
          - name: notes
            prompt: "fake: load changelog-writer"
            activates: [changelog-writer]
          - name: notes again
            prompt: "fake: load changelog-writer"
            activates: [changelog-writer]
          - name: an assert-only task is not a probe
            prompt: hi
            assert: assert True
        """,
        name="spec-probes",
    )
    done = tune(space, "--probes", str(spec), "--k", "2", env={"LEDGER_TOKEN": "s3cret-value"})
    assert done.returncode == 0, done.stderr
    data = summary(space)
    assert data["split"]["train"] + data["split"]["test"] == 4
    baseline = data["candidates"][0]["train"]
    assert baseline["accuracy"] == 1.0  # the neighbour loaded where it should: correct
    run = json.loads(Path(baseline["run"]).read_text("utf-8"))
    assert {s["name"] for s in run["meta"]["skill_snapshots"]} == {SKILL, "changelog-writer"}
    # the spec's sandbox and MCP servers are carried over, the secret only as its reference
    (measured,) = (space.root / ".caliper" / "tune" / SKILL).glob(
        "*/candidates/c0/train/*.eval.yaml"
    )
    text = measured.read_text("utf-8")
    assert str(space.root / "tools") in text and "secret-answers" in text
    assert "${LEDGER_TOKEN}" in text and "ledger-server" in text
    for path in space.root.joinpath(".caliper").rglob("*"):
        if path.is_file():
            assert "s3cret-value" not in path.read_text("utf-8", "replace"), path


def test_max_attempts_stops_cleanly_with_the_best_so_far(space: Workspace) -> None:
    probes = trigger_eval(space, right=False)
    done = tune(space, "--probes", str(probes), "--k", "2", "--max-attempts", "16")
    assert done.returncode == 0, done.stderr
    data = summary(space)
    assert "--max-attempts 16 reached" in data["stop_reason"]
    assert data["budget"]["attempts"] == 12 and data["budget"]["proposer_calls"] == 0
    assert data["final_description"] == data["original_description"]
    assert data["test"]["after"] is not None
    assert "unchanged" in done.stdout


def test_max_attempts_too_small_for_one_measurement_is_a_usage_error(space: Workspace) -> None:
    done = tune(space, "--probes", str(trigger_eval(space)), "--k", "2", "--max-attempts", "5")
    assert done.returncode == 2
    assert (
        "--max-attempts 5 is too small" in done.stderr
        and "at least --max-attempts 16" in done.stderr
    )
    assert "Traceback" not in done.stderr
    assert not (space.root / ".caliper" / "tune").exists()


def test_a_proposer_without_usable_answers_is_asked_twice_then_stops(space: Workspace) -> None:
    """The fake agent answers the proposer with no JSON: re-asked once, then tuning stops."""
    done = tune(space, "--probes", str(trigger_eval(space, right=False)), "--k", "2")
    assert done.returncode == 0, done.stderr
    data = summary(space)
    assert data["budget"]["proposer_calls"] == 2
    assert "the proposer gave no usable description" in data["stop_reason"]
    assert "dropped a proposal" in done.stdout


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (
            "probes:\n  - prompt: hi\n    should_trigger: yes please\n",
            ":3:21:",
            "expected true or false",
        ),
        ("probes:\n  - prompt: hi\n", ":2:5:", "missing `should_trigger:`"),
        ("probes:\n  - should_trigger: true\n", ":2:5:", "missing `prompt:`"),
        (
            "probes:\n  - prompt: hi\n    shuold_trigger: true\n",
            ":3:5:",
            "Did you mean 'should_trigger'?",
        ),
        (
            "probes:\n  - prompt: hi\n    should_trigger: true\n    activates: []\n",
            ":2:5:",
            "not both",
        ),
        ("probes: []\n", ":1:9:", "the probe list is empty"),
        ("probe:\n  - prompt: hi\n", ":1:1:", "Did you mean 'probes'?"),
        ("probes:\n  - prompt: [unclosed\n", ":3:1:", "invalid YAML"),
        (
            "probes:\n  - prompt: hi\n    activates: [nobody]\n",
            ":2:",
            "'nobody' is not the tuned skill or a declared neighbour",
        ),
        (
            "skill: other-skill\nprobes:\n  - prompt: hi\n    should_trigger: true\n",
            ":1:1:",
            "'other-skill'",
        ),
    ],
)
def test_malformed_probe_files_say_where_and_exit_2(
    space: Workspace, text: str, where: str, message: str
) -> None:
    path = write(space, "bad.probes.yaml", text)
    done = tune(space, "--probes", str(path))
    assert done.returncode == 2, done.stderr
    assert f"bad.probes.yaml{where}" in done.stderr and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (space.root / ".caliper" / "tune").exists()  # nothing ran


def test_malformed_trigger_eval_json_says_where(space: Workspace) -> None:
    path = write(space, "t.json", '[{"query": "hi", "should_trigger": "maybe"}]')
    done = tune(space, "--probes", str(path))
    assert done.returncode == 2
    assert "t.json:1:36: [0].should_trigger: expected true or false" in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--proposer-model", "nosuchbackend:x"], "no installed backend is called 'nosuchbackend'"),
        (["--k", "0"], "Invalid value for '--k'"),
    ],
)
def test_bad_flags_exit_2(space: Workspace, args: list[str], message: str) -> None:
    done = tune(space, "--probes", str(trigger_eval(space)), *args)
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_a_folder_without_skill_md_exits_2(space: Workspace) -> None:
    (space.root / "empty").mkdir()
    done = subprocess.run(
        [str(CALIPER), "tune", str(space.root / "empty"), "--probes", str(trigger_eval(space))],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "no SKILL.md there" in done.stderr


def test_ctrl_c_after_the_baseline_keeps_the_summary(space: Workspace) -> None:
    """Interrupted during the test measurement: exit 130, the baseline run and a summary
    saying why it stopped are on disk."""
    items = [{"query": f"{LOAD}\nfake: sleep 2", "should_trigger": True} for _ in range(2)]
    items += [{"query": "fake: sleep 2", "should_trigger": False} for _ in range(2)]
    probes = write(space, "slow.json", json.dumps(items))
    process = subprocess.Popen(
        [
            str(CALIPER),
            "tune",
            str(space.root / "skills" / SKILL),
            "--model",
            "fake",
            "--probes",
            str(probes),
            "--k",
            "2",
        ],
        cwd=space.root,
        env=space.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    train = space.root / ".caliper" / "results" / f"tune-{SKILL}-train"
    deadline = time.monotonic() + 60
    while not any(train.glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)  # the test measurement has started
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    data = summary(space)
    assert data["stop_reason"].startswith("stopped early"), data["stop_reason"]
    assert data["candidates"][0]["train"]["accuracy"] == 1.0
    assert "Traceback" not in stderr


def test_a_missing_agent_cli_is_a_setup_error_before_anything_runs(space: Workspace) -> None:
    env = space.env(FAKE_AGENT_CLI_PATH=str(space.root / "no-such-agent"))
    done = subprocess.run(
        [
            str(CALIPER),
            "tune",
            str(space.root / "skills" / SKILL),
            "--model",
            "fake",
            "--probes",
            str(trigger_eval(space)),
        ],
        cwd=space.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    assert "fake-agent" in done.stderr and "Traceback" not in done.stderr
    assert not (space.root / ".caliper" / "tune").exists()
