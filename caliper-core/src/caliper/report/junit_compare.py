"""``caliper compare --junit PATH``: a comparison as JUnit XML (see :mod:`.junit`).

One ``<testcase>`` per task matched on both sides (class ``caliper.SPEC.compare``), failing
when its drop is a statistically supported regression (after the multiple-testing
correction); a drop that is not supported passes, its verdict in ``<system-out>``. One more
case, ``whole run``, carries the overall test. With ``--fail-on activation`` (or ``both``) an
activation regression fails its task's case too. Tasks found on one side only are
``<skipped>``. Failures carry Δ with its interval, the p-value and both attempt strips.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from caliper.report.baseline_text import verdict_sentence
from caliper.report.compare_view import ablation_headline
from caliper.report.junit import attempt_strip, finish_document
from caliper.results.gate import format_fraction

if TYPE_CHECKING:
    from caliper.results.baseline import BaselineVerdict
    from caliper.results.compare import RunComparison, TaskComparison
    from caliper.results.stats import Interval

REGRESSED = "regressed"


def points(delta: float | None, interval: Interval | None = None) -> str:
    """``−33.3 pts [−80.1, +12.4]`` (``—`` when unknown)."""
    if delta is None:
        return "—"
    text = f"{delta * 100:+.1f} pts".replace("-", "−")
    if interval is not None:
        low = f"{interval.low * 100:+.1f}".replace("-", "−")
        high = f"{interval.high * 100:+.1f}".replace("-", "−")
        text += f" [{low}, {high}]"
    return text


def p_text(p: float | None) -> str:
    """``p=0.023`` / ``p<0.001`` / ``p —``."""
    if p is None:
        return "p —"
    return "p<0.001" if p < 0.001 else f"p={p:.3g}"


def _rate(value: float | None) -> str:
    return "—" if value is None else format_fraction(value)


def _task_sentence(task: TaskComparison) -> str:
    return (
        f"{task.verdict}: {_rate(task.a_score)} → {_rate(task.b_score)}, Δ "
        f"{points(task.delta, task.delta_interval)}, {p_text(task.p_adjusted)} (adjusted)"
    )


def _activation_sentence(task: TaskComparison) -> str:
    return (
        f"activation {task.activation_verdict}: {_rate(task.a_activation)} → "
        f"{_rate(task.b_activation)}, Δ "
        f"{points(task.activation_delta, task.activation_delta_interval)}, "
        f"{p_text(task.activation_p_adjusted)} (adjusted)"
    )


def _case(
    suite: ET.Element,
    classname: str,
    name: str,
    failures: list[str],
    notes: list[str],
) -> str:
    case = ET.SubElement(suite, "testcase", name=name, classname=classname, time="0")
    text = "\n".join(notes)
    if failures:
        element = ET.SubElement(case, "failure", message="; ".join(failures), type=REGRESSED)
        element.text = text
        return "failure"
    out = ET.SubElement(case, "system-out")
    out.text = text
    return "pass"


def compare_junit_document(comparison: RunComparison, *, fail_on: str = "score") -> ET.ElementTree:
    """The JUnit XML tree of a comparison; ``fail_on`` is ``score``, ``activation`` or
    ``both`` (which regressions fail a case, as ``compare --fail-on`` says)."""
    classname = f"caliper.{comparison.spec_name}.compare"
    score_fails = fail_on in ("score", "both")
    activation_fails = fail_on in ("activation", "both")
    root = ET.Element("testsuites", name=f"caliper compare {comparison.spec_name}")
    suite = ET.SubElement(
        root,
        "testsuite",
        name=f"{comparison.spec_name}: {comparison.a_run_id} → {comparison.b_run_id}",
        hostname="localhost",
    )
    properties = ET.SubElement(suite, "properties")
    for key, value in (
        ("before", comparison.a_run_id),  # run ids, never local paths: the XML is shared
        ("after", comparison.b_run_id),
        ("confidence", f"{comparison.confidence:g}"),
        ("correction", comparison.correction),
        ("comparable", "true" if comparison.comparable else "false"),
        *(("warning", warning) for warning in comparison.warnings),
    ):
        ET.SubElement(properties, "property", name=key, value=value)
    counts = {"pass": 0, "failure": 0, "skipped": 0}
    for task in comparison.tasks:
        failures, notes = [], [_task_sentence(task)]
        if score_fails and task.verdict == REGRESSED:
            failures.append(_task_sentence(task))
        if task.activation_verdict != "unmeasured":
            notes.append(_activation_sentence(task))
            if activation_fails and task.activation_verdict == REGRESSED:
                failures.append(_activation_sentence(task))
        notes += [
            f"before: {attempt_strip(task.a_outcomes)}",
            f"after:  {attempt_strip(task.b_outcomes)}",
        ]
        counts[_case(suite, classname, task.name, failures, notes)] += 1
    overall = (
        f"{comparison.overall_verdict}: {_rate(comparison.a_overall)} → "
        f"{_rate(comparison.b_overall)}, Δ {points(comparison.delta, comparison.delta_interval)}"
        f", {p_text(comparison.p_adjusted)} (adjusted) over {comparison.matched_measured} tasks"
    )

    headline = ablation_headline(comparison)
    whole_notes = [overall, headline] if headline else [overall]
    whole_notes += [f"warning: {warning}" for warning in comparison.warnings]
    overall_fails = score_fails and comparison.overall_regression
    if activation_fails and comparison.activation_overall_regression:
        overall_fails = True
    failures = [overall] if overall_fails else []
    counts[_case(suite, classname, "whole run", failures, whole_notes)] += 1
    for side, names in (("before", comparison.only_in_a), ("after", comparison.only_in_b)):
        for name in names:
            case = ET.SubElement(suite, "testcase", name=name, classname=classname, time="0")
            ET.SubElement(case, "skipped", message=f"only in the {side} run: not compared")
            counts["skipped"] += 1
    return finish_document(root, suite, counts, wall=None)


def baseline_junit_document(
    verdict: BaselineVerdict, gate: list[str], *, fail_on: str = "score"
) -> ET.ElementTree:
    """The JUnit XML tree of a baseline pair: compare's cases (control → full), then one
    case for the baseline's verdict, failed when ``gate`` (``--require-improvement``,
    ``--min-lift``) names a failure."""
    tree = compare_junit_document(verdict.comparison, fail_on=fail_on)
    root = tree.getroot()
    suite = root.find("testsuite")
    assert suite is not None
    classname = f"caliper.{verdict.comparison.spec_name}.baseline"
    name = f"baseline: does {', '.join(verdict.left_out)} help?"
    outcome = _case(suite, classname, name, list(gate), [verdict_sentence(verdict)])
    for element in (root, suite):
        element.set("tests", str(int(element.get("tests", "0")) + 1))
        if outcome == "failure":
            element.set("failures", str(int(element.get("failures", "0")) + 1))
    ET.indent(tree)
    return tree
