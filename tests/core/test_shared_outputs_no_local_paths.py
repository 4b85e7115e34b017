"""What is meant to be shared (HTML pages, Markdown summaries, JUnit XML) carries no absolute
local path, and ``caliper report`` of a saved run does not claim to have saved it: every
shared output is made through the real ``caliper`` script from runs stored under a tmp folder,
and that folder must not appear in any of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from page_support import page_text
from test_results_support import F, P, caliper, run, snapshot, task

from caliper.results.codec import dumps

BEFORE = "2026-12-01T10-00-00Z"
AFTER = "2026-12-01T11-00-00Z"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / ".caliper" / "results" / "demo"
    folder.mkdir(parents=True)
    spec = tmp_path / "demo.eval.yaml"
    spec.write_text("tasks: []\n", encoding="utf-8")
    skill = snapshot("my-skill")
    skill.path = str(tmp_path / "skills" / "my-skill")
    for run_id, outcomes in ((BEFORE, [P, P, F]), (AFTER, [P, F, F])):
        results = run(
            [task("x", outcomes, expected=["my-skill"], activated=[["my-skill"]] * 3)],
            run_id=run_id,
            spec_path=str(spec),
            skills=[skill],
        )
        (folder / f"{run_id}.json").write_text(dumps(results), encoding="utf-8")
    return tmp_path


def _shared_outputs(project: Path) -> dict[str, str]:
    out = project / "shared"
    out.mkdir()
    made: dict[str, str] = {}
    steps = {
        "report.html": ("report", f"demo/{AFTER}", "--format", "html", "-o"),
        "compare.html": ("compare", f"demo/{BEFORE}", f"demo/{AFTER}", "--format", "html", "-o"),
        "history.html": ("history", "demo", "--format", "html", "-o"),
        "compare.xml": ("compare", f"demo/{BEFORE}", f"demo/{AFTER}", "--junit"),
    }
    for name, args in steps.items():
        done = caliper(*args, str(out / name), cwd=project)
        assert done.returncode in (0, 1), done.stderr
        made[name] = page_text((out / name).read_text(encoding="utf-8"))
    for extra in sorted((out / "history.runs").glob("*.html")):
        made[f"history.runs/{extra.name}"] = page_text(extra.read_text(encoding="utf-8"))
    made["report.md"] = caliper(
        "report", f"demo/{AFTER}", "--format", "markdown", cwd=project
    ).stdout
    made["compare.md"] = caliper(
        "compare", f"demo/{BEFORE}", f"demo/{AFTER}", "--format", "markdown", cwd=project
    ).stdout
    return made


def test_no_shared_output_holds_a_local_absolute_path(project: Path) -> None:
    made = _shared_outputs(project)
    assert len(made) >= 7 and all(made.values())
    root = str(project.resolve())
    for name, text in made.items():
        assert root not in text, f"{name} holds the local path {root}"
        assert str(project) not in text, f"{name} holds the local path {project}"
    # what a reader needs instead: the run named by its reference and the spec by its file
    assert f"demo/{AFTER}" in made["report.html"]
    assert "demo.eval.yaml" in made["report.html"]


def test_report_of_a_saved_run_does_not_say_it_saved_it(project: Path) -> None:
    done = caliper("report", f"demo/{AFTER}", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "Results saved to" not in done.stdout
    assert f"Read from .caliper/results/demo/{AFTER}.json" in done.stdout


def test_run_junit_and_the_run_page_of_a_real_run_hold_no_local_path(tmp_path: Path) -> None:
    from caliper_fakeagent.harness import Workspace

    space = Workspace.create(tmp_path)
    space.skill("helper")
    spec = space.spec("""\
        skills:
          - ./skills/helper
        tasks:
          - name: greets
            prompt: "fake: load helper\\nfake: say hi"
            assert: "assert False, 'no file'"
            activates: [helper]
        """)
    junit = space.root / "junit.xml"
    done = space.run(spec, "--k", "2", "--junit", str(junit))
    assert done.returncode == 0, done.stderr
    page = space.root / "run.html"
    shown = caliper("report", "demo", "--format", "html", "-o", str(page), cwd=space.root)
    assert shown.returncode == 0, shown.stderr
    markdown = caliper("report", "demo", "--format", "markdown", cwd=space.root).stdout
    root = str(tmp_path.resolve())
    for name, text in (
        ("junit.xml", junit.read_text(encoding="utf-8")),
        ("run.html", page_text(page.read_text(encoding="utf-8"))),
        ("markdown", markdown),
    ):
        assert root not in text, f"{name} holds the local path {root}"
