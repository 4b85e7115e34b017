"""``caliper report --matrix ID`` / ``report RUN RUN…`` / ``compare --matrix ID`` (issue 18):
engines side by side per task, through the real ``caliper`` script on hand-made runs.

No new statistic is added here: the view must show exactly what the tested functions give
(Wilson intervals from scoring, Fisher / stratified tests and Holm from significance, Newcombe
from stats), so the expected numbers are computed by calling those functions in the test.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from test_results_support import INFRA, NC, F, P, caliper, run, task

from caliper.results.codec import dumps
from caliper.results.significance import fisher_exact, holm_adjust, stratified_exact_test
from caliper.results.stats import (
    EXCLUDING_ZERO,
    newcombe_cc_difference_interval,
    rate_interval,
)

MATRIX = "2026-12-01T10-00-00Z-abc123"
ENGINES = ["claude-code", "codex:gpt-5.5", "pi"]
# engine -> task -> outcomes (a strong difference on "commit", none on "config")
OUTCOMES = {
    "claude-code": {"commit": [P] * 10, "config": [P] * 5 + [F] * 5, "lint": [P, F]},
    "codex:gpt-5.5": {"commit": [P] * 2 + [F] * 8, "config": [P] * 5 + [F] * 5, "lint": [P, P]},
    "pi": {"commit": [P] * 9 + [F], "config": [P] * 4 + [F] * 5 + [INFRA], "lint": [F, F]},
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / ".caliper" / "results" / "demo"
    folder.mkdir(parents=True)
    for number, engine in enumerate(ENGINES):
        backend, _, model = engine.partition(":")
        results = run(
            [task(name, outs) for name, outs in OUTCOMES[engine].items()],
            run_id=f"2026-12-01T10-00-0{number}Z",
            k=10,
            backend=backend,
            model=model or None,
            requested_model=engine,
            matrix={"id": MATRIX, "engine": engine, "engines": ENGINES},
        )
        (folder / f"{results.meta.run_id}.json").write_text(dumps(results), encoding="utf-8")
    # a run of the same spec outside the matrix, and one of another matrix
    (folder / "2026-12-01T09-00-00Z.json").write_text(
        dumps(run([task("commit", [F])], run_id="2026-12-01T09-00-00Z")), encoding="utf-8"
    )
    (folder / "2026-12-01T11-00-00Z.json").write_text(
        dumps(
            run(
                [task("commit", [F])],
                run_id="2026-12-01T11-00-00Z",
                matrix={"id": "other", "engine": "pi", "engines": ["pi"]},
            )
        ),
        encoding="utf-8",
    )
    return tmp_path


def _counts(engine: str, name: str) -> tuple[int, int]:
    outcomes = OUTCOMES[engine][name]
    return outcomes.count(P), sum(1 for o in outcomes if o in (P, F))


def _expected_differences() -> list[dict]:
    """Every pair, task by task then the whole run, tested and Holm-corrected together."""
    raw = []
    for a, b in itertools.combinations(ENGINES, 2):
        pairs = []
        for name in OUTCOMES[a]:
            counts = (*_counts(a, name), *_counts(b, name))
            pairs.append(counts)
            raw.append((name, a, b, counts, fisher_exact(*counts)))
        raw.append((None, a, b, pairs, stratified_exact_test(pairs)))
    adjusted = holm_adjust([p for *_rest, p in raw])
    return [
        {"task": name, "a": a, "b": b, "p_value": p, "p_adjusted": q, "significant": q <= 0.05}
        for (name, a, b, _counts_, p), q in zip(raw, adjusted, strict=True)
    ]


def test_json_shows_the_tested_statistics(project: Path) -> None:
    done = caliper("report", "--matrix", MATRIX, "--format", "json", cwd=project)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["matrix_id"] == MATRIX and data["spec_name"] == "demo"
    assert [e["engine"] for e in data["engines"]] == ENGINES
    assert [e["run"] for e in data["engines"]] == [f"demo/2026-12-01T10-00-0{i}Z" for i in range(3)]
    assert [t["name"] for t in data["tasks"]] == ["commit", "config", "lint"]
    for row in data["tasks"]:
        for engine in ENGINES:
            cell = row["engines"][engine]
            successes, usable = _counts(engine, row["name"])
            assert (cell["successes"], cell["usable"]) == (successes, usable)
            shown = rate_interval(successes, usable, 0.95)  # the interval reports print
            assert (cell["interval"]["low"], cell["interval"]["high"]) == pytest.approx(
                (shown.low, shown.high)
            )
            assert cell["interval"]["method"] == shown.method
    expected = _expected_differences()
    assert data["tests"] == len(expected) == 12
    assert len(data["differences"]) == len(expected)
    for got, want in zip(data["differences"], expected, strict=True):
        assert (got["task"], got["a"], got["b"], got["significant"]) == (
            want["task"],
            want["a"],
            want["b"],
            want["significant"],
        )
        assert got["p_value"] == pytest.approx(want["p_value"])
        assert got["p_adjusted"] == pytest.approx(want["p_adjusted"])
    commit = next(
        d for d in data["differences"] if (d["task"], d["a"], d["b"]) == ("commit", *ENGINES[:2])
    )
    newcombe = newcombe_cc_difference_interval(10, 10, 2, 10, 0.95)
    assert commit["delta"] == pytest.approx(-0.8)
    assert (commit["interval"]["low"], commit["interval"]["high"]) == pytest.approx(
        (newcombe.low, newcombe.high)
    )
    # the strong drop is significant, an equal rate is not
    assert commit["significant"] is True
    config = next(
        d for d in data["differences"] if (d["task"], d["a"], d["b"]) == ("config", *ENGINES[:2])
    )
    assert config["delta"] == 0 and config["significant"] is False
    # the same through compare --matrix and through naming the runs
    again = caliper("compare", "--matrix", MATRIX, "--format", "json", cwd=project)
    assert json.loads(again.stdout)["differences"] == data["differences"]
    files = [
        str(project / ".caliper/results/demo" / f"2026-12-01T10-00-0{i}Z.json") for i in range(3)
    ]
    named = json.loads(caliper("report", *files, "--format", "json", cwd=project).stdout)
    assert named["differences"] == data["differences"]


def test_text_and_markdown_show_engines_side_by_side_and_mark_significance(
    project: Path,
) -> None:
    text = caliper("report", "--matrix", MATRIX, cwd=project)
    assert text.returncode == 0, text.stderr
    out = text.stdout
    for engine in ENGINES:
        assert engine in out
    # continuity-corrected score intervals (R's prop.test(10, 10) and prop.test(5, 10))
    assert "10/10  100.0% [65.5–100] *" in out  # claude-code on commit, differs from codex
    assert "5/10  50.0% [20.1–79.9]" in out
    assert "significant" in out and "not significant" in out and "whole run" in out
    assert "12 tests corrected together with Holm" in out
    markdown = caliper("report", "--matrix", MATRIX, "--format", "markdown", cwd=project)
    assert markdown.returncode == 0, markdown.stderr
    lines = markdown.stdout.splitlines()
    assert lines[0].startswith("### Matrix")
    assert "| Task | claude\\-code | codex\\:gpt\\-5\\.5 | pi |" in lines
    marked = {
        engine
        for d in _expected_differences()
        if d["task"] == "commit" and d["significant"]
        for engine in (d["a"], d["b"])
    }
    assert marked == {"claude-code", "codex:gpt-5.5"}  # codex vs pi is not, after Holm
    cells = next(line for line in lines if line.startswith("| commit |")).split(" | ")[1:]
    assert [cell.rstrip(" |").endswith("**\\***") for cell in cells] == [True, True, False]
    assert any(line.endswith("| **significant** |") for line in lines)


def test_matrix_errors_are_one_clear_message(project: Path) -> None:
    missing = caliper("report", "--matrix", "nope", cwd=project)
    assert missing.returncode == 2 and "No saved run belongs to matrix 'nope'" in missing.stderr
    (project / "other.eval.yaml").write_text("tasks: []\n")
    other = project / ".caliper/results/other"
    other.mkdir()
    (other / "2026-12-01T12-00-00Z.json").write_text(
        dumps(run([task("commit", [P])], spec_name="other", run_id="2026-12-01T12-00-00Z")),
        encoding="utf-8",
    )
    mixed = caliper(
        "report",
        str(other / "2026-12-01T12-00-00Z.json"),
        str(project / ".caliper/results/demo/2026-12-01T10-00-00Z.json"),
        cwd=project,
    )
    assert mixed.returncode == 2 and "runs of different specs" in mixed.stderr
    output = caliper("report", "--matrix", MATRIX, "-o", "m.txt", cwd=project)
    assert output.returncode == 2 and "-o/--output is for --format html" in output.stderr
    assert not (project / "m.txt").exists()
    table = caliper("report", "--matrix", MATRIX, "--format", "csv", cwd=project)
    assert table.returncode == 2 and "attempt table of one run" in table.stderr
    bars = caliper("report", "--matrix", MATRIX, "--min-score", "0.5", cwd=project)
    assert bars.returncode == 2 and "Bars" in bars.stderr
    both = caliper("compare", "a.json", "--matrix", MATRIX, cwd=project)
    assert both.returncode == 2 and "--matrix takes no BEFORE/AFTER" in both.stderr
    for done in (missing, mixed, output, table, bars, both):
        assert "Traceback" not in done.stderr


ACTIVATION_MATRIX = "2026-12-02T10-00-00Z-act"


@pytest.fixture
def activation_project(tmp_path: Path) -> Path:
    """claude loads the expected skill on every attempt, pi on none; pass rates are equal."""
    folder = tmp_path / ".caliper" / "results" / "demo"
    folder.mkdir(parents=True)
    engines = ["claude-code", "pi"]
    for number, (engine, loaded) in enumerate([("claude-code", ["my-skill"]), ("pi", [])]):
        results = run(
            [
                task("trigger", [NC] * 3, expected=["my-skill"], activated=[loaded] * 3),
                task("commit", [P, P, F], expected=["my-skill"], activated=[loaded] * 3),
                task("plain", [P, F]),
            ],
            run_id=f"2026-12-02T10-00-0{number}Z",
            backend=engine,
            requested_model=engine,
            matrix={"id": ACTIVATION_MATRIX, "engine": engine, "engines": engines},
        )
        (folder / f"{results.meta.run_id}.json").write_text(dumps(results), encoding="utf-8")
    return tmp_path


def test_matrix_shows_activation_in_every_form(activation_project: Path) -> None:
    project = activation_project
    done = caliper("report", "--matrix", ACTIVATION_MATRIX, "--format", "json", cwd=project)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    rows = {row["name"]: row["engines"] for row in data["tasks"]}
    for name in ("trigger", "commit"):
        assert rows[name]["claude-code"]["activation"]["successes"] == 3
        assert rows[name]["claude-code"]["activation"]["usable"] == 3
        assert rows[name]["pi"]["activation"]["successes"] == 0
        assert rows[name]["pi"]["activation"]["usable"] == 3
        wilson = rate_interval(0, 3, 0.95)
        got = rows[name]["pi"]["activation"]["interval"]
        assert (got["low"], got["high"]) == pytest.approx((wilson.low, wilson.high))
    assert rows["plain"]["pi"]["activation"] is None
    assert [e["activation_score"] for e in data["engines"]] == [1.0, 0.0]
    # activation is its own Holm family: per task 3/3 vs 0/3, then the stratified whole run
    act = [d for d in data["differences"] if d["measure"] == "activation"]
    p_task = fisher_exact(3, 3, 0, 3)
    p_whole = stratified_exact_test([(3, 3, 0, 3), (3, 3, 0, 3)])
    want = holm_adjust([p_task, p_task, p_whole])
    assert [d["task"] for d in act] == ["trigger", "commit", None]
    assert [d["p_adjusted"] for d in act] == pytest.approx(want)
    assert [d["delta"] for d in act] == pytest.approx([-1.0, -1.0, -1.0])
    assert data["activation_tests"] == 3
    whole = act[-1]
    assert whole["significant"] is (want[-1] <= 0.05)
    success = [d for d in data["differences"] if d["measure"] == "success"]
    assert {d["task"] for d in success} == {"commit", "plain", None}
    assert data["tests"] == 3

    text = caliper("report", "--matrix", ACTIVATION_MATRIX, cwd=project).stdout
    assert "skill 3/3  100.0%" in text and "skill 0/3  0.0%" in text
    assert "trigger only" in text and "0/0 —" not in text
    assert "skill loaded" in text and "Skill loaded" in text
    compared = caliper("compare", "--matrix", ACTIVATION_MATRIX, cwd=project).stdout
    whole_line = next(
        line for line in compared.splitlines() if "whole run" in line and "skill loaded" in line
    )
    assert "−100 pts" in whole_line and "no change" not in whole_line
    markdown = caliper(
        "compare", "--matrix", ACTIVATION_MATRIX, "--format", "markdown", cwd=project
    ).stdout
    trigger = next(line for line in markdown.splitlines() if line.startswith("| trigger |"))
    assert "skill 3/3 100\\.0%" in trigger and "skill 0/3 0\\.0%" in trigger
    assert "| **Skill loaded** |" in markdown
    assert "| whole run | skill loaded | claude\\-code | pi | −100 pts" in markdown
    page = project / "page.html"
    html = caliper(
        "compare",
        "demo/2026-12-02T10-00-00Z",
        "demo/2026-12-02T10-00-01Z",
        "--format",
        "html",
        "-o",
        str(page),
        cwd=project,
    )
    assert html.returncode == 0, html.stderr
    matrix_html = page.read_text(encoding="utf-8").split('id="matrix"', 1)[1].split("</table>")[0]
    assert 'skill loaded 100.0% <span class="note">3/3' in matrix_html
    assert 'skill loaded 0.0% <span class="note">0/3' in matrix_html
    assert "<th>skill loaded</th>" in matrix_html
    # the matrix page (compare --matrix takes --format html and -o like report --matrix)
    matrix_page = project / "matrix.html"
    done = caliper(
        "compare",
        "--matrix",
        ACTIVATION_MATRIX,
        "--format",
        "html",
        "-o",
        str(matrix_page),
        cwd=project,
    )
    assert done.returncode == 0, done.stderr
    grid = matrix_page.read_text(encoding="utf-8").split('id="matrix-grid"', 1)[1]
    assert 'class="mx-score">trigger only</div>' in grid.split("</table>")[0]
    assert "skill 3/3 100.0%" in grid and "skill 0/3 0.0%" in grid
    assert 'id="matrix-skill-loaded"' in grid


def test_every_difference_interval_agrees_with_its_verdict(project: Path) -> None:
    """Each Δ interval the matrix shows holds 0 exactly when its difference is not
    significant (the plain Newcombe interval for lint's 2/2 against 0/2 excluded 0 while
    Fisher's test could not reject)."""
    done = caliper("report", "--matrix", MATRIX, "--format", "json", cwd=project)
    assert done.returncode == 0, done.stderr
    differences = json.loads(done.stdout)["differences"]
    assert differences
    for diff in differences:
        interval = diff["interval"]
        if interval is None:
            continue
        open_at_zero = interval["method"].endswith(EXCLUDING_ZERO)
        holds_zero = interval["low"] <= 0.0 <= interval["high"] and not open_at_zero
        assert holds_zero is (not diff["significant"]), diff
