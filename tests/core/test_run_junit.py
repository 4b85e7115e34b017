"""`caliper run --junit PATH`: the JUnit XML CI systems read, validated with a real XML schema.

There is no JUnit schema shipped inside a PyPI package (junitparser, junit2html,
unittest-xml-reporting, juwunit and junit-xml-output were checked: none ships one), so the
schema in ``schemas/junit-jenkins.xsd`` (loaded in ``gate_support.py``) was written from
the format's documentation: the Jenkins xUnit plugin's ``junit-10.xsd``
(github.com/jenkinsci/xunit-plugin) and https://llg.cubic.org/docs/junit/ (the Ant
XMLJUnitResultFormatter layout). The report is
validated with ``xmlschema`` and read back with ElementTree, never matched as a string.
"""

from __future__ import annotations

import os
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from gate_support import JUNIT_SCHEMA as SCHEMA
from gate_support import seeded_spec

from caliper.system.output_file import OutputWriteError, write_output
from caliper_fakeagent.harness import Workspace

ODD_TASK = """\
  - name: 'odd <name> & "quotes" | pipe'
    prompt: "fake: say hi"
    assert: |
      assert False, "\\x1b[31mred text\\x1b[0m from a terminal \\x07"
"""


@pytest.fixture(scope="module")
def junit_run(tmp_path_factory: pytest.TempPathFactory):
    space = Workspace.create(tmp_path_factory.mktemp("junit"))
    spec = seeded_spec(space, {"always": "PPPP", "mostly": "PPPF", "never": "FFFF"}, extra=ODD_TASK)
    target = space.root / "reports" / "junit.xml"
    done = space.run(
        spec,
        "--k",
        "4",
        "--workers",
        "1",  # attempts in order, so the strip's order is the pattern's
        "--min-score",
        "always=0.35",  # 4/4: exact lower bound 39.8 %; 0/4: exact upper bound 60.2 %
        "--min-score",
        "never=0.9",
        "--junit",
        str(target),
        timeout=180,
    )
    return done, target


def test_the_report_is_valid_junit(junit_run) -> None:
    done, target = junit_run
    assert done.returncode == 3, done.stderr  # the 'never' bar failed
    SCHEMA.validate(str(target))  # raises on any schema violation
    assert f"JUnit report written to {target}" in done.stderr
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert [p.name for p in target.parent.iterdir()] == ["junit.xml"]  # no temp file left


def test_one_case_per_task_and_per_bar(junit_run) -> None:
    _done, target = junit_run
    root = ET.parse(target).getroot()
    [suite] = root.findall("testsuite")
    cases = suite.findall("testcase")
    names = [(c.get("classname"), c.get("name")) for c in cases]
    assert names == [
        ("caliper.demo", "always"),
        ("caliper.demo", "mostly"),
        ("caliper.demo", "never"),
        ("caliper.demo", 'odd <name> & "quotes" | pipe'),
        ("caliper.demo.bars", "success of task 'always' ≥ 35%"),
        ("caliper.demo.bars", "success of task 'never' ≥ 90%"),
    ]
    by_name = {c.get("name"): c for c in cases}
    assert by_name["always"].find("failure") is None
    mostly = by_name["mostly"].find("failure")
    assert mostly is not None
    assert mostly.get("message") == "3/4 usable attempts passed (✓✓✓✗)"
    assert "attempt 4 (task_fail): assert: seeded failure" in (mostly.text or "")
    never = by_name["never"].find("failure")
    assert never is not None and "✗✗✗✗" in never.get("message", "")
    bar = by_name["success of task 'never' ≥ 90%"].find("failure")
    assert bar is not None and bar.get("type") == "failed"
    assert "attempts: ✗✗✗✗" in (bar.text or "")
    assert by_name["success of task 'always' ≥ 35%"].find("failure") is None
    for element in (root, suite):
        assert (element.get("tests"), element.get("failures"), element.get("errors")) == (
            "6",
            "4",
            "0",
        )


def test_terminal_escapes_cannot_break_the_xml(junit_run) -> None:
    _done, target = junit_run
    root = ET.parse(target).getroot()
    odd = next(c for c in root.iter("testcase") if c.get("name", "").startswith("odd"))
    text = odd.find("failure").text or ""
    assert "red text" in text and "\x1b" not in text and "\ufffd[31m" in text


def test_the_schema_rejects_a_broken_report(tmp_path: Path) -> None:
    """The schema check can fail: a testcase without a name, a negative count."""
    bad = tmp_path / "bad.xml"
    bad.write_text(
        '<testsuites><testsuite name="s" tests="-1"><testcase/></testsuite></testsuites>'
    )
    assert not SCHEMA.is_valid(str(bad))


def test_a_directory_is_refused_before_any_attempt(tmp_path: Path) -> None:
    space = Workspace.create(tmp_path)
    spec = seeded_spec(space, {"always": "P"})
    done = space.run(spec, "--k", "1", "--junit", str(tmp_path))
    assert done.returncode == 2
    assert "is a directory" in done.stderr
    assert done.results_path is None


def test_the_writer_keeps_the_old_file_when_renaming_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "junit.xml"
    target.write_bytes(b"old")

    def broken_replace(_src: str, _dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OutputWriteError) as raised:
        write_output(target, b"new")
    assert raised.value.exit_code == 74 and "intact" in raised.value.message
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["junit.xml"]


def test_unmeasured_activation_and_lenient_cases(tmp_path: Path) -> None:
    """Hand-made run: a task with only unusable attempts is an <error>; a trigger-only task
    whose skill did not load fails; an inconclusive bar under --inconclusive pass passes."""
    from test_results_support import INFRA, NC, P, run, task

    from caliper.commands.gate_options import evaluate
    from caliper.report.junit import junit_document, write_junit
    from caliper.results.gate import parse_bar

    results = run(
        [
            task("broken", [INFRA, INFRA]),
            task("trigger", [NC, NC], expected=["my-skill"], activated=[["my-skill"], []]),
            task("mostly", [P, P, P, P, P, P, P, P, P, INFRA]),
        ]
    )
    gate = evaluate(results, [parse_bar("mostly=0.9", "score")], "pass", 0.95)
    target = tmp_path / "junit.xml"
    write_junit(target, junit_document(results, gate))
    SCHEMA.validate(str(target))
    cases = {c.get("name"): c for c in ET.parse(target).getroot().iter("testcase")}
    error = cases["broken"].find("error")
    assert error is not None and error.get("message") == "unmeasured: no usable attempt (⊘⊘)"
    failure = cases["trigger"].find("failure")
    assert failure is not None
    assert failure.get("message") == "activation: 1/2 attempts loaded the expected skills (··)"
    bar = cases["success of task 'mostly' ≥ 90%"]
    assert bar.find("failure") is None  # 9/9 = [70.1 %, 100 %] straddles 90 %: inconclusive
    assert (bar.find("system-out").text or "").startswith("inconclusive: the interval")
