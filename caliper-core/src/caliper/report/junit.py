"""``--junit PATH``: a run (and its bars) as JUnit XML, the test-report format CI systems read.

The layout follows the Ant/Jenkins JUnit format (``<testsuites>`` › ``<testsuite>`` ›
``<testcase>``) that GitHub, GitLab and Jenkins show per test:

* one ``<testcase>`` per task (``classname`` ``caliper.SPEC``): it fails when any usable
  attempt failed (the message says how many passed, the text carries the attempt strip such
  as ``✓✓✗`` and each failed attempt's reason), is an ``<error>`` when nothing could be
  measured (every attempt unusable, or the task was aborted), and passes otherwise;
* one ``<testcase>`` per bar (``classname`` ``caliper.SPEC.bars``): it fails when the bar
  stopped the gate (failed, unmeasured, or inconclusive under ``--inconclusive fail``); its
  text says what judged it (``judged by: Wilson interval (fixed k)``, or the sequential test
  of a ``--k auto`` run).

The file goes through the one output writer (a file is replaced atomically, so a CI
step never reads half a report; a device or FIFO is written in place). Standard library only.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from caliper.report.fmt import STRIP_SYMBOLS
from caliper.results.gate import format_fraction
from caliper.results.models import Outcome, RunResults, TaskResult
from caliper.results.run_clock import run_clock
from caliper.results.scoring import TaskScore, TaskStatus, score_run
from caliper.results.stats import DEFAULT_CONFIDENCE, Interval
from caliper.system.output_file import write_output

if TYPE_CHECKING:
    from caliper.results.gate import BarResult, GateResult

REASON_LIMIT = 2000

# Characters XML 1.0 cannot carry at all (C0 controls but tab/newline/CR, lone surrogates,
# U+FFFE/U+FFFF): an agent's reason may hold terminal escapes, which would make the file
# unreadable to every CI system.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold replaced by U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def attempt_strip(outcomes: Iterable[Outcome]) -> str:
    """One plain symbol per attempt, in order: ``✓`` pass, ``✗`` fail or cheat, ``⊘``
    unusable, ``·`` not checked (the strip of the text report, without colour)."""
    return "".join(STRIP_SYMBOLS[Outcome(o)][0] for o in outcomes) or "—"


def _rate(value: float | None, interval: Interval | None) -> str:
    """``75% [30.1%–95.4%] (95% interval)``; ``—`` when nothing was measured."""
    if value is None:
        return "—"
    if interval is None:
        return format_fraction(value)
    return (
        f"{format_fraction(value)} [{format_fraction(interval.low)}–"
        f"{format_fraction(interval.high)}] ({format_fraction(interval.level)} interval)"
    )


def _seconds(value: float | None) -> str:
    return f"{value or 0.0:.3f}"


def _clip(text: str) -> str:
    return text if len(text) <= REASON_LIMIT else text[: REASON_LIMIT - 1] + "…"


def _failed_reasons(task: TaskResult) -> list[str]:
    lines = []
    for record in task.attempts:
        graded_ok = record.outcome in (Outcome.PASS, Outcome.NOT_CHECKED)
        if graded_ok and record.activation_passed is not False:
            continue
        why = (
            record.reason
            or record.error
            or ("activation check failed" if record.activation_passed is False else "no reason")
        )
        lines.append(f"attempt {record.attempt} ({record.outcome.value}): {_clip(why)}")
    return lines


def _task_case(suite: ET.Element, classname: str, task: TaskResult, score: TaskScore) -> str:
    """Add the task's testcase; return ``"pass"``, ``"failure"`` or ``"error"``."""
    case = ET.SubElement(
        suite,
        "testcase",
        name=task.name,
        classname=classname,
        time=_seconds(score.usage.wall_seconds),
    )
    strip = attempt_strip(a.outcome for a in task.attempts)
    counted = f"{score.successes}/{score.usable} usable attempts passed"
    rate = f"success: {_rate(score.score, score.score_interval)}"
    body = "\n".join([f"attempts: {strip}", rate, *_failed_reasons(task)])
    status = score.status
    activation_failed = (
        score.activation_usable > 0 and score.activation_successes < score.activation_usable
    )
    if status in (TaskStatus.UNMEASURED, TaskStatus.ABORTED):
        what = "aborted" if status is TaskStatus.ABORTED else "unmeasured"
        element = ET.SubElement(
            case,
            "error",
            message=f"{what}: no usable attempt ({strip})",
            type=status.value,
        )
        element.text = body
        return "error"
    if status in (TaskStatus.FAIL, TaskStatus.PARTIAL) or activation_failed:
        if status in (TaskStatus.FAIL, TaskStatus.PARTIAL):
            message = f"{counted} ({strip})"
        else:
            message = (
                f"activation: {score.activation_successes}/{score.activation_usable} "
                f"attempts loaded the expected skills ({strip})"
            )
        element = ET.SubElement(case, "failure", message=message, type=status.value)
        element.text = body
        return "failure"
    out = ET.SubElement(case, "system-out")
    out.text = f"{counted}\nattempts: {strip}\n{rate}"
    return "pass"


def _bar_case(suite: ET.Element, classname: str, result: BarResult, strips: dict) -> str:
    case = ET.SubElement(suite, "testcase", name=result.bar.label, classname=classname, time="0")
    strip = strips.get(result.bar.task)
    detail = f"{result.verdict.value}: {result.reason}"
    judged = f"judged by: {result.measured.method_label}"
    text = "\n".join(filter(None, [detail, judged, f"attempts: {strip}" if strip else None]))
    if not result.passed:
        element = ET.SubElement(case, "failure", message=detail, type=result.verdict.value)
        element.text = text
        return "failure"
    out = ET.SubElement(case, "system-out")
    out.text = text
    return "pass"


def junit_document(
    results: RunResults, gate: GateResult | None = None, confidence: float | None = None
) -> ET.ElementTree:
    """The JUnit XML tree of a run and, when bars were set, its gate (intervals in the task
    cases at ``confidence``, by default the gate's or 0.95)."""
    meta = results.meta
    if confidence is None:
        confidence = gate.confidence if gate is not None else DEFAULT_CONFIDENCE
    run = score_run(results, confidence)
    classname = f"caliper.{meta.spec_name}"
    engine = ":".join(p for p in (meta.backend, meta.model) if p) or "unknown engine"
    root = ET.Element("testsuites", name=f"caliper {meta.spec_name}")
    suite = ET.SubElement(
        root,
        "testsuite",
        name=f"{meta.spec_name} ({engine})",
        timestamp=meta.started_at or "",
        hostname="localhost",
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("run_id", meta.run_id),
        ("k", str(meta.k)),
        ("backend", meta.backend or ""),
        ("model", meta.model or ""),
        ("partial", "true" if meta.partial else "false"),
    ):
        ET.SubElement(properties, "property", name=name, value=value)
    counts = {"pass": 0, "failure": 0, "error": 0}
    for task, score in zip(results.tasks, run.tasks, strict=True):
        counts[_task_case(suite, classname, task, score)] += 1
    if gate is not None:
        strips = {t.name: attempt_strip(a.outcome for a in t.attempts) for t in results.tasks}
        for result in gate.bars:
            counts[_bar_case(suite, f"{classname}.bars", result, strips)] += 1

    clock = run_clock(meta).seconds  # the suite's time is the run's, start to end
    return finish_document(
        root, suite, counts, wall=clock if clock is not None else run.usage.wall_seconds
    )


def finish_document(
    root: ET.Element, suite: ET.Element, counts: dict[str, int], *, wall: float | None
) -> ET.ElementTree:
    """Set the counts (``pass``/``failure``/``error``/``skipped`` cases) and time on the
    ``<testsuites>`` root and its one ``<testsuite>``, make every text XML-safe, indent."""
    total = sum(counts.values())
    for element in (root, suite):
        element.set("tests", str(total))
        element.set("failures", str(counts.get("failure", 0)))
        element.set("errors", str(counts.get("error", 0)))
        element.set("time", _seconds(wall))
    suite.set("skipped", str(counts.get("skipped", 0)))
    _make_safe(root)
    ET.indent(root)
    return ET.ElementTree(root)


def _make_safe(root: ET.Element) -> None:
    for element in root.iter():
        if element.text:
            element.text = xml_safe(element.text)
        for key, value in element.attrib.items():
            element.set(key, xml_safe(value))


def write_junit(path: Path, tree: ET.ElementTree) -> None:
    """Serialise ``tree`` as UTF-8 XML with a declaration and write it through the one
    output writer (a file is replaced atomically, a device or FIFO written in place); raises
    :class:`caliper.system.output_file.OutputWriteError`."""
    buffer = io.BytesIO()
    tree.write(buffer, encoding="utf-8", xml_declaration=True)
    write_output(path, buffer.getvalue() + b"\n")
