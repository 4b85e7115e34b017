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

from caliper.report import fmt
from caliper.results.baseline import HELPS, HURTS, NO_DIFFERENCE, BaselineVerdict
from caliper.results.models import RunResults

VERDICT_STYLE = {HELPS: "bold green", HURTS: "bold red", NO_DIFFERENCE: "yellow"}


def pair_title(verdict: BaselineVerdict) -> str:
    """``Baseline: without my-skill → full neighbourhood (codex)``."""
    engine = f" ({verdict.engine})" if verdict.engine else ""
    return f"Baseline: without {', '.join(verdict.left_out)} → full neighbourhood{engine}"


def verdict_sentence(verdict: BaselineVerdict) -> str:
    """One sentence: what the pair found about what the control arm left out."""
    what = ", ".join(verdict.left_out)
    comparison = verdict.comparison
    if not comparison.comparable:
        sides = [
            f"the {label} arm {side.phrase}"
            for label, side in (("control", comparison.a_side), ("full", comparison.b_side))
            if not side.complete
        ]
        return (
            f"{what}: not judged, {' and '.join(sides)} (a shard's pair is judged once its "
            "shards are merged: `caliper merge` them, then `caliper compare --baseline ID`)."
        )
    interval = verdict.lift_interval
    lift = fmt.signed_points(verdict.lift)
    span = fmt.signed_interval(interval) if interval is not None else ""
    how = "anytime-valid " if verdict.sequential is not None else ""
    level = f"{verdict.comparison.confidence * 100:g}%"
    if verdict.verdict == HELPS:
        return f"{what} helps: {lift} {span} ({how}{level} interval)."
    if verdict.verdict == HURTS:
        return f"{what} hurts: {lift} {span} ({how}{level} interval)."
    if verdict.verdict == NO_DIFFERENCE:
        return f"{what}: no detectable difference ({lift} {span}). " + detectable_sentence(verdict)
    return f"{what}: unmeasured (no task was measured on both arms)."


def detectable_sentence(verdict: BaselineVerdict) -> str:
    """The smallest lift this pair could have detected, in words."""
    sens = verdict.sensitivity
    if sens is None:
        return ""
    scope = " on every task" if sens.tasks > 1 else ""
    basis = (
        f"at about {sens.attempts:.3g} usable attempts per task and arm, from a control rate "
        f"of {sens.control_rate * 100:g}%, with {sens.power * 100:g}% power"
    )
    if sens.overall_lift is None:
        text = f"No lift{scope} would have been detectable ({basis})"
    else:
        text = f"The smallest lift{scope} it could detect is {round(sens.overall_lift * 100)} pts"
        text += f" ({basis})"
    if sens.tasks > 1:
        alone = "none" if sens.task_lift is None else f"{round(sens.task_lift * 100)} pts"
        text += f"; for one task alone: {alone}"
    return text + ". Raise --k to see smaller differences."


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
    from caliper.report.compare_view import render_compare

    console.print(Rule(pair_title(verdict), style="dim"))
    render_compare(verdict.comparison, console, explain=explain, allow_partial=True)
    _activation_side_by_side(verdict, control, full, console)
    console.print()
    style = VERDICT_STYLE.get(verdict.verdict, "")
    console.print(Text(f" Verdict: {verdict_sentence(verdict)}", style=style))
    if verdict.sequential is not None:
        console.print(
            Text(
                " --k auto: each task stopped by the paired anytime-valid rule; the verdict's "
                "interval is the anytime-valid one (compare's p-values above assume a fixed k).",
                style="dim",
            )
        )
    for line in gate:
        console.print(Text(f" Failed: {line}", style="bold red"))


def _activation_side_by_side(
    verdict: BaselineVerdict, control: RunResults, full: RunResults, console: Console
) -> None:
    """Both arms' activation scoreboards, next to each other when the terminal is wide."""
    from caliper.report.run_view import activation_table, outside_loads
    from caliper.results.scoring import score_run

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
    from caliper.report.markdown_compare import compare_markdown

    lines = [f"## {pair_title(verdict)}", "", f"**Verdict:** {verdict_sentence(verdict)}", ""]
    lines += [f"- **Failed:** {line}" for line in gate]
    if gate:
        lines.append("")
    return "\n".join(lines) + "\n" + compare_markdown(verdict.comparison)
