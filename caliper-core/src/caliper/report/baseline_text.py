"""A baseline pair's verdict in words (plain text, for the terminal, Markdown, JUnit and the
page): its title, the verdict sentence and what the pair could have detected."""

from __future__ import annotations

from caliper.report import fmt
from caliper.results.baseline import HELPS, HURTS, NO_DIFFERENCE, BaselineVerdict


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


SEQUENTIAL_NOTE = (
    "--k auto: each task stopped by the paired anytime-valid rule; the verdict's interval is "
    "the anytime-valid one (compare's p-values assume a fixed k, so they are not the verdict's "
    "test)."
)
"""Said beside a ``--k auto`` pair's compare, whose per-task p-values are fixed-k ones."""


def sequential_note(verdict: BaselineVerdict) -> str | None:
    """:data:`SEQUENTIAL_NOTE` for a ``--k auto`` pair, else ``None``."""
    return SEQUENTIAL_NOTE if verdict.sequential is not None else None


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
