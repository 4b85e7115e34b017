"""``caliper compare --format markdown``: a comparison as GitHub-flavoured Markdown.

A heading, the two runs, the ablation headline for an ablation pair ("my-skill adds
+40 pts [+18, +62], p=0.003"), a warning when a side is not complete, one row per matched task
(before → after, Δ in points with its interval, the adjusted p-value, the verdict and both
attempt strips), the whole-run line, and the tasks found on one side only. User text is
escaped as in :mod:`.markdown`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caliper.report.compare_spend_view import change_cells, shown_changes, unmeasured_note
from caliper.report.compare_view import ablation_headline
from caliper.report.junit_compare import p_text, points
from caliper.report.markdown import escape, strip
from caliper.results.gate import format_fraction

if TYPE_CHECKING:
    from caliper.results.compare import RunComparison

VERDICT_LABEL = {
    "regressed": "❌ regressed",
    "improved": "✅ improved",
    "not significant": "➖ not significant",
    "no change": "➖ no change",
    "unmeasured": "⛔ unmeasured",
}


def _rate(value: float | None) -> str:
    return "—" if value is None else format_fraction(value)


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def compare_markdown(comparison: RunComparison) -> str:
    """The whole Markdown summary of a comparison (ends with a newline)."""
    level = format_fraction(comparison.confidence)
    lines = [
        f"## Caliper compare: {escape(comparison.spec_name)}",
        "",
        f"before `{comparison.a_run_id}` → after `{comparison.b_run_id}` · {level} confidence"
        " · whole run first, then tasks with Holm's correction",
        "",
    ]

    headline = ablation_headline(comparison)
    if headline:
        lines += [f"**{escape(headline)}**", ""]
    for label, side in (("before", comparison.a_side), ("after", comparison.b_side)):
        if not side.complete:
            why = f": {escape(side.reason)}" if side.reason else ""
            lines += [f"> **The {label} run is {side.state}**{why}.", ""]
    if not comparison.comparable:
        lines += ["> **Not comparable**: one side did not run to the end.", ""]
    for warning in comparison.warnings:
        lines += [f"> {escape(warning)}", ""]
    lines.append(
        _row(
            [
                "Task",
                "Before",
                "After",
                "Δ (interval)",
                "p (adj.)",
                "Verdict",
                "Before attempts",
                "After attempts",
            ]
        )
    )
    lines.append(_row(["---", "---:", "---:", "---", "---:", "---", "---", "---"]))
    for task in comparison.tasks:
        lines.append(
            _row(
                [
                    escape(task.name),
                    _rate(task.a_score),
                    _rate(task.b_score),
                    points(task.delta, task.delta_interval),
                    p_text(task.p_adjusted).removeprefix("p").lstrip("="),
                    VERDICT_LABEL.get(task.verdict, escape(task.verdict)),
                    strip(task.a_outcomes),
                    strip(task.b_outcomes),
                ]
            )
        )
    lines.append(
        _row(
            [
                f"**whole run** ({comparison.matched_measured} tasks)",
                _rate(comparison.a_overall),
                _rate(comparison.b_overall),
                points(comparison.delta, comparison.delta_interval),
                p_text(comparison.p_adjusted).removeprefix("p").lstrip("="),
                VERDICT_LABEL.get(comparison.overall_verdict, escape(comparison.overall_verdict)),
                "",
                "",
            ]
        )
    )
    lines.append("")
    for side, names in (("before", comparison.only_in_a), ("after", comparison.only_in_b)):
        if names:
            shown = ", ".join(escape(n) for n in names)
            lines += [f"Only in the {side} run (not compared): {shown}", ""]
    lines += _spend_lines(comparison)
    return "\n".join(lines).rstrip("\n") + "\n"


def _spend_lines(comparison: RunComparison) -> list[str]:
    """The cost and agent-time changes table (means before → after, permutation test)."""
    lines = [f"### Cost and time ({escape(comparison.spend_method)})", ""]
    changes = shown_changes(comparison.spend)
    if changes:
        lines.append(_row(["Measure", "Mean before → after", "Δ", "p (adj.)", "Verdict"]))
        lines.append(_row(["---", "---", "---:", "---:", "---"]))
        lines += [_row([escape(cell) for cell in change_cells(c)]) for c in changes]
        lines.append("")
    note = unmeasured_note(comparison.spend)
    if note:
        lines += [escape(note), ""]
    return lines
