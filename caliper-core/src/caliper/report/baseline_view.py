"""The end of ``caliper run SPEC --baseline``: does the skill help?

Per engine: the calibrated compare of the control arm → the full arm
(:func:`caliper.report.compare_view.render_compare`), both arms' activation scoreboards side
by side (does a neighbour step in when the skill is absent?), and the verdict as a lift
(helps / hurts / no detectable difference, with the smallest lift the pair could detect),
then the gate's lines. :func:`baseline_markdown` is the same for ``--format markdown``.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.columns import Columns
from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from caliper.report.baseline_text import pair_title, sequential_note, verdict_sentence
from caliper.report.compare_view import render_compare
from caliper.report.markdown_compare import compare_markdown
from caliper.report.run_view import activation_table, outside_loads
from caliper.results.baseline import HELPS, HURTS, NO_DIFFERENCE, BaselineVerdict
from caliper.results.models import RunResults
from caliper.results.scoring import score_run

__all__ = ["baseline_markdown", "pair_title", "render_baseline", "verdict_sentence"]

VERDICT_STYLE = {HELPS: "bold green", HURTS: "bold red", NO_DIFFERENCE: "yellow"}


def render_baseline(
    verdict: BaselineVerdict,
    control: RunResults,
    full: RunResults,
    console: Console,
    *,
    gate: Sequence[str] = (),
    explain: bool = False,
) -> None:
    """Print one engine's pair: compare, the two activation scoreboards, the verdict, and
    the gate's failures (``gate``; empty: passed or not asked)."""
    console.print(Rule(pair_title(verdict), style="dim"))
    render_compare(verdict.comparison, console, explain=explain, allow_partial=True)
    _activation_side_by_side(verdict, control, full, console)
    console.print()
    style = VERDICT_STYLE.get(verdict.verdict, "")
    console.print(Text(f" Verdict: {verdict_sentence(verdict)}", style=style))
    note = sequential_note(verdict)
    if note is not None:
        console.print(Text(f" {note}", style="dim"))
    for line in gate:
        console.print(Text(f" Failed: {line}", style="bold red"))


def _activation_side_by_side(
    verdict: BaselineVerdict, control: RunResults, full: RunResults, console: Console
) -> None:
    """Both arms' activation scoreboards, next to each other when the terminal is wide."""
    confidence = verdict.comparison.confidence
    tables = []
    for label, results in (
        (f"without {', '.join(verdict.left_out)}", control),
        ("full", full),
    ):
        run = score_run(results, confidence)
        if not run.activation_per_skill and not outside_loads(results):
            continue
        table = activation_table(run, narrow=True, outside=outside_loads(results))
        table.title = f"Activation, {label}"
        tables.append(table)
    if tables:
        console.print()
        console.print(Columns(tables, padding=(0, 4)))


def baseline_markdown(verdict: BaselineVerdict, gate: Sequence[str] = ()) -> str:
    """The pair as Markdown (for ``$GITHUB_STEP_SUMMARY``): the verdict, the gate, then
    compare's table."""
    lines = [f"## {pair_title(verdict)}", "", f"**Verdict:** {verdict_sentence(verdict)}", ""]
    note = sequential_note(verdict)
    if note is not None:
        lines += [f"_{note}_", ""]
    lines += [f"- **Failed:** {line}" for line in gate]
    if gate:
        lines.append("")
    return "\n".join(lines) + "\n" + compare_markdown(verdict.comparison)
