"""``caliper report`` through the real console script, on runs saved with the store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_results_support import caliper, make_project


def test_report_without_ref_shows_the_latest_run(tmp_path):
    project = make_project(tmp_path)
    out = caliper("report", cwd=project)
    assert out.returncode == 0, out.stderr
    assert "CALIPER  —  demo" in out.stdout
    assert "run 2026-11-30T19-00-00Z" in out.stdout
    assert "✓ PASS" in out.stdout
    assert "Read from .caliper/results/demo/2026-11-30T19-00-00Z.json" in out.stdout
    assert "Results saved to" not in out.stdout


@pytest.mark.parametrize(
    "ref",
    ["demo", "demo.eval.yaml", ".caliper/results/demo/2026-11-30T18-01-33Z.json"],
)
def test_report_accepts_a_name_a_spec_or_a_file(tmp_path, ref):
    project = make_project(tmp_path)
    out = caliper("report", ref, cwd=project)
    assert out.returncode == 0, out.stderr
    expected = "18-01-33Z" if ref.endswith(".json") else "19-00-00Z"
    assert f"run 2026-11-30T{expected}" in out.stdout


def test_report_from_a_subfolder_finds_the_same_runs(tmp_path):
    project = make_project(tmp_path)
    sub = project / "deeper" / "still"
    sub.mkdir(parents=True)
    out = caliper("report", "other", cwd=sub)
    assert out.returncode == 0, out.stderr
    assert "CALIPER  —  other" in out.stdout


def test_report_verbose_adds_pass_at_k(tmp_path):
    project = make_project(tmp_path)
    out = caliper("report", "demo", "--verbose", cwd=project)
    assert "pass@k" in out.stdout and "pass^k" in out.stdout


def test_report_json_carries_derived_blocks(tmp_path):
    project = make_project(tmp_path)
    out = caliper(
        "report", ".caliper/results/demo/2026-11-30T18-01-33Z.json", "--format", "json", cwd=project
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["meta"]["run_id"] == "2026-11-30T18-01-33Z"
    assert data["tasks"][0]["attempts"][0]["outcome"] == "pass"
    assert data["scores"]["tasks"][0]["score"] == pytest.approx(1 / 3)
    # 1 pass in 3: the unbiased pass@3 estimate is 1 - C(2, 3) / C(3, 3) = 1
    assert data["scores"]["tasks"][0]["pass_at_k"] == 1.0
    assert data["scores"]["score"] == pytest.approx((1 / 3 + 1) / 2)
    assert data["usage_totals"]["tokens_in"] == 5 * 1250
    assert data["usage_totals"]["tokens_out"] == 5 * 100


def test_report_unknown_spec_lists_what_exists(tmp_path):
    project = make_project(tmp_path)
    out = caliper("report", "demmo", cwd=project)
    assert out.returncode == 2
    assert "No saved run for spec 'demmo'" in out.stderr
    assert "Did you mean 'demo'?" in out.stderr
    assert "demo, other" in out.stderr
    assert "Traceback" not in out.stderr


def test_report_corrupt_file_is_a_clear_error(tmp_path):
    project = make_project(tmp_path)
    bad = project / ".caliper" / "results" / "demo" / "2026-11-30T20-00-00Z.json"
    bad.write_text('{"meta": ')
    out = caliper("report", "demo", cwd=project)
    assert out.returncode == 2
    assert "is not a readable caliper results file: it is not valid JSON" in out.stderr
    assert "Traceback" not in out.stderr


def test_report_with_no_caliper_folder(tmp_path):
    out = caliper("report", cwd=tmp_path)
    assert out.returncode == 2
    assert "No .caliper/ directory at or above" in out.stderr


def test_report_help_documents_exit_codes():
    out = caliper("report", "--help", cwd=Path.cwd())
    assert "Exit codes" in out.stdout and "--format" in out.stdout


def test_report_with_an_empty_caliper_folder(tmp_path):
    (tmp_path / ".caliper").mkdir()
    out = caliper("report", cwd=tmp_path)
    assert out.returncode == 2
    assert "There are no saved runs under" in out.stderr


# A results file as caliper wrote it before intervals existed (schema 1, no source_kind on
# snapshots, no derived blocks): it must still load, report, and get intervals derived.
OLD_FILE = {
    "meta": {
        "run_id": "2026-10-01T09-00-00Z",
        "spec_name": "demo",
        "spec_path": "/work/demo.eval.yaml",
        "started_at": "2026-10-01T09:00:00+00:00",
        "k": 3,
        "skill_snapshots": [{"name": "my-skill", "path": "/skills/my-skill"}],
        "schema_version": 1,
    },
    "tasks": [
        {
            "name": "Writes a commit",
            "index": 0,
            "k": 3,
            "attempts": [
                {"task_name": "Writes a commit", "attempt": n, "outcome": outcome}
                for n, outcome in ((1, "pass"), (2, "pass"), (3, "task_fail"))
            ],
        }
    ],
}


def test_an_old_schema_1_file_reports_with_derived_intervals(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps(OLD_FILE))
    out = caliper("report", str(path), "--format", "json", "--confidence", "0.9", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    interval = data["scores"]["tasks"][0]["score_interval"]
    assert interval["method"] == "wilson-cc" and interval["level"] == 0.9
    assert interval["low"] < 2 / 3 < interval["high"]
    assert data["scores"]["score_interval"]["level"] == 0.9
    text = caliper("report", str(path), cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "66.7%" in text.stdout
    assert "score_interval" not in path.read_text()  # derived, never written back


@pytest.mark.parametrize("bad", ["0", "1", "1.5", "nan", "abc"])
def test_report_refuses_a_bad_confidence(tmp_path, bad):
    project = make_project(tmp_path)
    out = caliper("report", "demo", "--confidence", bad, cwd=project)
    assert out.returncode == 2
    assert "--confidence" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("bad", ["0", "1", "1.5", "nan"])
def test_run_refuses_a_bad_confidence_before_anything_runs(tmp_path, bad):
    out = caliper("run", "missing.eval.yaml", "--confidence", bad, cwd=tmp_path)
    assert out.returncode == 2
    assert "--confidence" in out.stderr and "strictly between 0 and 1" in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / ".caliper").exists()


def test_report_text_shows_intervals_at_the_level_asked(tmp_path):
    project = make_project(tmp_path)
    first = ".caliper/results/demo/2026-11-30T18-01-33Z.json"
    out = caliper("report", first, cwd=project)
    assert "33.3% [1.8–87.5]" in out.stdout  # 1/3: R prop.test(1, 3) (continuity-corrected)
    assert "95% intervals rest on 2–3 usable attempts per task" in out.stdout
    out = caliper("report", first, "--confidence", "0.8", cwd=project)
    assert out.returncode == 0, out.stderr
    assert "80% intervals" in out.stdout and "33.3% [1.8–87.5]" not in out.stdout


def test_run_prints_intervals_at_the_level_asked(tmp_path):
    from caliper_fakeagent.harness import Workspace

    space = Workspace.create(tmp_path)
    spec = space.spec(
        'tasks:\n  - name: hi\n    prompt: "fake: say hi"\n    assert: "assert True"\n'
    )
    result = space.run(spec, "--k", "2", "--confidence", "0.9")
    assert result.returncode == 0, result.stderr
    assert "90% intervals rest on 2 usable attempts per task" in result.stdout
    assert "100.0% (uninformative)" in result.stdout  # 2 tries: no interval is claimed
    assert "score_interval" not in result.results_path.read_text()  # derived, never saved


def _mcp_run(tmp_path: Path, *, ablated_mcp: list[str], tool: str) -> Path:
    """A saved run whose one attempt called ``tool`` once; ``ablated_mcp`` left out."""
    from test_results_support import P, run, task

    from caliper.plugin.attempt import Turn
    from caliper.results import codec

    made = run([task("calls a tool", [P])], ablated_mcp=ablated_mcp)
    made.tasks[0].attempts[0].transcript = [
        Turn(role="tool", tool_name=tool, tool_input={"text": "ping"}, tool_output="ping"),
        Turn(role="assistant", content="done"),
    ]
    path = tmp_path / "run.json"
    path.write_text(codec.dumps(made), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"mcp",
        b'"ablated_mcp": []',
        b'{"ablated_mcp": [], "x": 1}',
        b'{"ablated_mcp": ["gone"]}',
        b'{"ablated_mcp": [], "tool_name": "mcp__s__t"}',
        b'{"ablated_mcp": [],"a": "mcp"}\n"ablated_mcp": []',
        b'"ablated_mcp": [] "ablated_mcp": []',
        b'"ablated_mcp":[]',
        b"nothing here",
    ],
)
def test_names_mcp_is_the_count_of_mcp_beyond_the_empty_ablated_lists(tmp_path, content):
    """The text report decodes turns when the file holds ``mcp`` more often than it holds
    ``"ablated_mcp": []``: the mapped search says the same as counting both."""
    from caliper.commands.report import _needs_turns

    path = tmp_path / "run.json"
    path.write_bytes(content)
    expected = content.count(b"mcp") > content.count(b'"ablated_mcp": []')
    assert _needs_turns(path, "text") is expected
    assert _needs_turns(tmp_path / "missing.json", "text") is False


@pytest.mark.parametrize(
    ("ablated_mcp", "tool", "shown"),
    [
        ([], "mcp__kept__echo", "kept: 1 call, 0 errors in 1 attempt — echo 1"),
        (["gone"], "Bash", "gone: left out (--ablate mcp:gone), no calls"),
        ([], "Bash", None),
    ],
)
def test_report_text_counts_mcp_calls_only_when_the_run_has_any(tmp_path, ablated_mcp, tool, shown):
    """The text report decodes transcripts only for MCP lines: for a call of an MCP tool, for
    a server left out (listed with no calls), and not for a run with neither."""
    from caliper.commands.report import _needs_turns

    path = _mcp_run(tmp_path, ablated_mcp=ablated_mcp, tool=tool)
    assert b'"ablated_mcp": ' in path.read_bytes()  # every run's meta names the key
    assert _needs_turns(path, "text") is (shown is not None)
    assert _needs_turns(path, "json") is True
    out = caliper("report", str(path), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    if shown is None:
        assert "MCP calls" not in out.stdout
    else:
        assert " MCP calls" in out.stdout and shown in out.stdout, out.stdout
