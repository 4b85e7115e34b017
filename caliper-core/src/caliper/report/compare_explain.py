"""``caliper compare --explain``: every test behind the verdict, and what the pair could
have detected (the power of its tests), in plain words."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from caliper.report import fmt, plain_table
from caliper.results import power as power_mod
from caliper.results.compare import RunComparison

KS = (3, 5, 10, 20)
DROPS = (0.1, 0.2, 0.3, 0.4)


def _p(value: float | None) -> str:
    return fmt.DASH if value is None else f"{value:.4f}"


def _counts(successes: int, usable: int) -> str:
    return f"{successes}/{usable}" if usable else fmt.DASH


def _tests_table(comparison: RunComparison) -> Table:
    table = Table(box=None, pad_edge=False)
    for column in ("task", "before", "after", "Δ", "interval", "p", "p adj.", "verdict"):
        table.add_column(column, overflow="fold")
    for task in comparison.tasks:
        table.add_row(
            escape(task.name),
            _counts(task.a_successes, task.a_usable),
            _counts(task.b_successes, task.b_usable),
            fmt.signed_points(task.delta),
            fmt.signed_interval(task.delta_interval),
            _p(task.p_value),
            _p(task.p_adjusted),
            task.verdict,
        )
    if comparison.matched_measured > 1:
        table.add_row(
            "(whole run)",
            fmt.pct(comparison.a_overall),
            fmt.pct(comparison.b_overall),
            fmt.signed_points(comparison.delta),
            fmt.signed_interval(comparison.delta_interval),
            _p(comparison.p_value),
            _p(comparison.p_adjusted),
            comparison.overall_verdict,
        )
    return table


def _drop(value: float | None) -> str:
    return "none" if value is None else f"{round(value * 100)} pts"


def _drop_sentence(value: float | None) -> str:
    return "no drop at all would be" if value is None else f"a drop of {_drop(value)} would be"


def render_explain(comparison: RunComparison, console: Console) -> None:
    """Print the detail of every test and the sensitivity of the pair."""
    level = f"{comparison.confidence * 100:g}%"
    alpha = comparison.alpha
    console.print()
    console.print(Rule("How the verdict was reached", style="dim"))
    console.print(
        Text(
            f" Level {level}: a change counts when its adjusted p is at most "
            f"{alpha:.3g}. Per task: Fisher's exact test (two-sided) on usable attempts, "
            "Δ interval by Newcombe's hybrid score method. Whole run: an exact stratified "
            "permutation test of the mean change, paired by task; its Δ interval takes the "
            "same tasks as given (MOVER of continuity-corrected Wilson limits). The whole "
            "run is tested first, at the full level; the tasks are tested only when it "
            "rejects, with Holm's correction over the tasks (a task's adjusted p is the larger "
            "of the whole-run p and its Holm-adjusted p), so the chance of any false alarm is "
            f"at most {alpha:.3g}. docs/statistics.md explains each.",
        )
    )
    console.print()
    if comparison.tasks:
        plain_table.print_table(console, _tests_table(comparison))
    sens = comparison.sensitivity
    if sens is None:
        console.print(Text(" Nothing was measured on both sides, so nothing could be detected."))
        return
    console.print()
    console.print(Rule("What this pair could detect", style="dim"))
    overall_alpha = alpha
    task_alpha = power_mod.family_alpha(alpha, sens.tests)
    lines = [
        f" Baseline {round(sens.baseline * 100)}% (the before side's rate over matched tasks, "
        f"held to 50–95%), {sens.a_attempts:g} → {sens.b_attempts:g} usable attempts per "
        f"task, {sens.tasks} matched task(s), {sens.tests} task test(s) under Holm's correction.",
        f" Whole run (at p ≤ {overall_alpha:.3g}): {_drop_sentence(sens.overall_drop)} caught "
        f"on every task {sens.power * 100:g}% of the time.",
        f" One task alone (Fisher at p ≤ {task_alpha:.3g}, Holm's first step): "
        f"{_drop_sentence(sens.task_drop)} caught {sens.power * 100:g}% of the time.",
    ]
    target = round(sens.target_drop * 100)
    if sens.k_needed is None:
        lines.append(f" No k up to {power_mod.MAX_K} would catch a {target}-pt drop.")
    else:
        lines.append(
            f" A {target}-pt drop on every task needs k={sens.k_needed} on both sides to be "
            f"caught {sens.power * 100:g}% of the time."
        )
    needed = []
    for drop in DROPS:
        if drop > sens.baseline:
            continue
        k = power_mod.attempts_needed(drop, sens.tasks, overall_alpha, baseline=sens.baseline)
        needed.append(f"{round(drop * 100)} pts: k={k}" if k else f"{round(drop * 100)} pts: none")
    lines.append(
        " k needed (both sides) to catch a drop on every task of " + ", ".join(needed) + "."
    )
    for line in lines:
        console.print(Text(line))
    console.print()
    table = Table(title=f"Detectable drop from {round(sens.baseline * 100)}%", title_justify="left")
    table.add_column("k")
    table.add_column(f"{sens.tasks} task(s)", justify="right")
    table.add_column("one task alone", justify="right")
    for k in KS:
        overall = power_mod.overall_detectable_drop(
            sens.tasks, k, k, overall_alpha, baseline=sens.baseline
        )
        alone = power_mod.task_detectable_drop(k, k, task_alpha, baseline=sens.baseline)
        table.add_row(str(k), _drop(overall), _drop(alone))
    console.print(table)
