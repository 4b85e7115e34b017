"""Showing a matrix (:mod:`caliper.results.matrix`): engines side by side per task.

:func:`render_matrix` prints it with rich (one column per engine, each cell ``passes/usable``,
the rate and its interval; a ``*`` marks an engine that differs significantly from another on
that row), then every pairwise difference with its interval, Holm-adjusted p-value and verdict.
A task that asserts ``activates:`` also shows, in each cell, ``skill loaded/observed`` with
its rate, and its activation differences are listed beside the pass-rate ones.
:func:`matrix_markdown` gives the same as GitHub-flavoured Markdown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from caliper.report import fmt
from caliper.report.markdown import escape

if TYPE_CHECKING:
    from rich.console import Console

    from caliper.results.matrix import Matrix, MatrixCell, MatrixDifference

MARK = "*"
WHOLE_RUN = "whole run"
MEASURE_NAMES = {"success": "pass rate", "activation": "skill loaded"}


def success_text(cell: MatrixCell, marked: bool, sep: str = "  ") -> str:
    """``3/4  75.0% [30.1–95.4]`` (with `` *`` when ``marked``): the cell's pass rate."""
    if not cell.usable and cell.status == "TRIGGER-ONLY":
        return "trigger only"
    if not cell.usable:
        return f"0/0 {fmt.DASH}"
    text = f"{cell.successes}/{cell.usable}{sep}{fmt.pct_interval(cell.score, cell.interval)}"
    return f"{text} {MARK}" if marked else text


def activation_text(cell: MatrixCell, marked: bool, sep: str = "  ") -> str:
    """``skill 3/3  100.0% [43.9–100]``: the cell's activation rate (``not observable`` when
    no attempt showed what it loaded)."""
    if not cell.activation_usable:
        return "skill: not observable"
    rate = fmt.pct_interval(cell.activation_score, cell.activation_interval)
    text = f"skill {cell.activation_successes}/{cell.activation_usable}{sep}{rate}"
    return f"{text} {MARK}" if marked else text


def _cell_text(matrix: Matrix, task: str, engine: str, cell: MatrixCell | None) -> str:
    if cell is None:
        return "not in this run"
    text = success_text(cell, matrix.significant_on(task, engine))
    if cell.asserts_activation:
        marked = matrix.significant_on(task, engine, "activation")
        text += "\n" + activation_text(cell, marked)
    return text


def delta_text(difference: MatrixDifference) -> str:
    """``−80 pts [−94 to −38]``: the difference in points with its interval."""
    delta = fmt.signed_points(difference.delta)
    return f"{delta} {fmt.signed_interval(difference.interval)}".strip()


def verdict(difference: MatrixDifference) -> str:
    """``significant`` / ``not significant`` / ``no change`` / ``unmeasured``."""
    if difference.delta is None or difference.p_adjusted is None:
        return "unmeasured"
    if difference.significant:
        return "significant"
    if abs(difference.delta) <= 1e-12:
        return "no change"
    return "not significant"


def measure_name(difference: MatrixDifference) -> str:
    """``pass rate`` or ``skill loaded``: what ``difference`` measures, as the views say it."""
    return MEASURE_NAMES.get(difference.measure, difference.measure)


def tests_sentence(matrix: Matrix) -> str:
    """How many tests Holm's correction covered, as the differences' heading says it."""
    if not matrix.activation_tests:
        return f"{matrix.tests} tests corrected together with Holm"
    return (
        f"{matrix.tests} pass-rate and {matrix.activation_tests} skill-loaded tests, "
        "each family corrected together with Holm"
    )


def matrix_title(matrix: Matrix) -> str:
    """``Matrix ID — SPEC on N engines (95% intervals)``."""
    level = f"{matrix.confidence * 100:g}%"
    ident = f" {matrix.matrix_id}" if matrix.matrix_id else ""
    return (
        f"Matrix{ident} — {matrix.spec_name} on {len(matrix.engines)} engines ({level} intervals)"
    )


def render_matrix(matrix: Matrix, console: Console) -> None:
    """Print ``matrix`` to ``console``: the side-by-side table, then the differences."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    console.print(Text(matrix_title(matrix), style="bold"), soft_wrap=True)
    for engine in matrix.engines:
        note = "  (partial run)" if engine.partial else ""
        console.print(
            Text(f"  {engine.label}: run {engine.run}{note}", style="dim"), soft_wrap=True
        )
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    table.add_column("Task", overflow="fold")
    for engine in matrix.engines:
        table.add_column(engine.label, justify="right", overflow="fold")
    for task in matrix.tasks:
        cells = [
            _cell_text(matrix, task.name, engine.label, cell)
            for engine, cell in zip(matrix.engines, task.cells, strict=True)
        ]
        table.add_row(Text(task.name), *(Text(c) for c in cells))
    table.add_section()
    table.add_row(
        Text("Score", style="bold"),
        *(
            Text(
                fmt.pct_interval(e.score, e.score_interval)
                + (f" {MARK}" if matrix.significant_on(None, e.label) else "")
            )
            for e in matrix.engines
        ),
    )
    if matrix.asserts_activation:
        table.add_row(
            Text("Skill loaded", style="bold"),
            *(Text(overall_activation(matrix, e)) for e in matrix.engines),
        )
    console.print(table)
    if not matrix.differences:
        console.print(Text("  No pair of engines has a task measured on both.", style="dim"))
        return
    console.print(
        Text(
            f" Differences (b − a, {tests_sentence(matrix)}; "
            f"{MARK} = significant at {matrix.confidence * 100:g}%)",
            style="bold",
        ),
        soft_wrap=True,
    )
    diffs = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for name in ("Task", "measure", "a", "b", "Δ (b − a)", "adjusted p", "verdict"):
        diffs.add_column(name, overflow="fold")
    for d in matrix.differences:
        shown = verdict(d)
        diffs.add_row(
            Text(d.task if d.task is not None else WHOLE_RUN),
            Text(measure_name(d)),
            Text(d.a),
            Text(d.b),
            Text(delta_text(d)),
            Text(fmt.p_value(d.p_adjusted)),
            Text(shown, style="bold" if d.significant else "dim"),
        )
    console.print(diffs)


def overall_activation(matrix: Matrix, engine) -> str:
    """An engine's mean activation rate with its interval (`` *`` when significant)."""
    text = fmt.pct_interval(engine.activation_score, engine.activation_interval)
    return text + (f" {MARK}" if matrix.significant_on(None, engine.label, "activation") else "")


def _md_mark(text: str) -> str:
    """Escape ``text`` and turn its trailing significance mark into bold."""
    if text.endswith(f" {MARK}"):
        return escape(text[: -len(MARK) - 1]) + " **\\***"
    return escape(text)


def _md_cell(matrix: Matrix, task: str, engine: str, cell: MatrixCell | None) -> str:
    if cell is None:
        return "not in this run"
    text = _md_mark(success_text(cell, matrix.significant_on(task, engine), sep=" "))
    if cell.asserts_activation:
        marked = matrix.significant_on(task, engine, "activation")
        text += " · " + _md_mark(activation_text(cell, marked, sep=" "))
    return text


def matrix_markdown(matrix: Matrix) -> str:
    """``matrix`` as a Markdown summary (ends with a newline)."""
    lines = [f"### {escape(matrix_title(matrix))}", ""]
    lines.append("| Task | " + " | ".join(escape(e.label) for e in matrix.engines) + " |")
    lines.append("| --- |" + " ---: |" * len(matrix.engines))
    for task in matrix.tasks:
        cells = [
            _md_cell(matrix, task.name, e.label, cell)
            for e, cell in zip(matrix.engines, task.cells, strict=True)
        ]
        lines.append(f"| {escape(task.name)} | " + " | ".join(cells) + " |")
    scores = [
        escape(fmt.pct_interval(e.score, e.score_interval))
        + (" **\\***" if matrix.significant_on(None, e.label) else "")
        for e in matrix.engines
    ]
    lines.append("| **Score** | " + " | ".join(scores) + " |")
    if matrix.asserts_activation:
        loaded = [_md_mark(overall_activation(matrix, e)) for e in matrix.engines]
        lines.append("| **Skill loaded** | " + " | ".join(loaded) + " |")
    lines.append("")
    if matrix.differences:
        lines.append(
            f"Differences (b − a), {tests_sentence(matrix)}; "
            f"\\* = significant at {matrix.confidence * 100:g}%:"
        )
        lines.append("")
        lines.append("| Task | measure | a | b | Δ (b − a) | adjusted p | verdict |")
        lines.append("| --- | --- | --- | --- | ---: | ---: | --- |")
        for d in matrix.differences:
            shown = verdict(d)
            lines.append(
                "| "
                + " | ".join(
                    [
                        escape(d.task if d.task is not None else WHOLE_RUN),
                        escape(measure_name(d)),
                        escape(d.a),
                        escape(d.b),
                        escape(delta_text(d)),
                        escape(fmt.p_value(d.p_adjusted)),
                        f"**{shown}**" if d.significant else shown,
                    ]
                )
                + " |"
            )
        lines.append("")
    return "\n".join(lines) + "\n"
