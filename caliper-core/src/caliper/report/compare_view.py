"""The report of ``caliper compare``: before → after per task, then totals and warnings."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from caliper.report import fmt
from caliper.results.compare import RunComparison, TaskComparison
from caliper.results.scoring import TaskStatus

EPSILON = 1e-9


def _delta_markup(delta: float | None, *, regression: bool) -> str:
    if delta is None:
        return fmt.DASH
    text = fmt.signed_pct(delta)
    if regression:
        return f"[bold red]{text}[/bold red]"
    return f"[green]{text}[/green]" if delta > EPSILON else text


def _pair(a: float | None, b: float | None) -> str:
    return f"{fmt.pct(a)} → {fmt.pct(b)}"


def _has_activation(comparison: RunComparison) -> bool:
    return any(t.a_activation is not None or t.b_activation is not None for t in comparison.tasks)


def comparison_table(comparison: RunComparison) -> Table:
    """One row per matched task."""
    table = Table()
    # Only the task name wraps: before → after figures and glyph strips are never cut.
    table.add_column("Task", overflow="fold", min_width=12)
    table.add_column("success", justify="right", no_wrap=True)
    table.add_column("Δ", justify="right", no_wrap=True)
    activation = _has_activation(comparison)
    if activation:
        table.add_column("activation", justify="right", no_wrap=True)
    table.add_column("attempts", no_wrap=True)
    for task in comparison.tasks:
        row = [
            escape(task.name),
            _pair(task.a_score, task.b_score),
            _delta_markup(task.delta, regression=task.regression),
        ]
        if activation:
            row.append(_activation_cell(task))
        row.append(f"{fmt.strip_markup(task.a_outcomes)} → {fmt.strip_markup(task.b_outcomes)}")
        table.add_row(*row)
    return table


def _activation_cell(task: TaskComparison) -> str:
    cell = _pair(task.a_activation, task.b_activation)
    if task.activation_regression:
        return f"[red]{cell}[/red]"
    return cell


def _cost_delta(label: str, a: str, b: str, delta: str, pct: float | None, raw: float | None):
    line = Text(f" {label:<8}{a} → {b}")
    if raw is None:
        return line
    shown = f"   Δ {pct * 100:+.0f}% ({delta})" if pct is not None else f"   Δ {delta}"
    # cheaper is good (green); dearer is a trade-off to weigh (red), never a regression
    line.append(shown, style="green" if raw < 0 else "red" if raw > 0 else "")
    return line


def render_compare(comparison: RunComparison, console: Console) -> None:
    """Print ``comparison`` to ``console``."""
    console.print(Rule(escape(f"CALIPER  —  compare  —  {comparison.spec_name}")))
    console.print(Text(f"    {comparison.title}   ·   k={comparison.k}", style="dim"))
    console.print()
    if comparison.tasks:
        console.print(comparison_table(comparison))
    else:
        console.print(Text("  No task appears in both runs.", style="yellow"))
    console.print()
    overall = Text(f" Overall  {_pair(comparison.a_overall, comparison.b_overall)}   ")
    if comparison.delta is None:
        overall.append("Δ (matched) —  no task measured on both sides", style="dim")
    else:
        arrow = "↑" if comparison.delta > EPSILON else "↓" if comparison.delta < -EPSILON else "="
        style = "green" if arrow == "↑" else "red" if arrow == "↓" else ""
        overall.append(f"Δ (matched) {fmt.signed_pct(comparison.delta)} {arrow}", style=style)
    console.print(overall)
    usage = comparison.usage
    console.print(
        _cost_delta(
            "Tokens",
            fmt.tokens(usage.a_tokens),
            fmt.tokens(usage.b_tokens),
            ("+" if (usage.tokens_delta or 0) > 0 else "") + fmt.tokens(usage.tokens_delta),
            usage.tokens_delta_pct,
            usage.tokens_delta,
        )
    )
    console.print(
        _cost_delta(
            "Wall",
            fmt.duration(usage.a_wall),
            fmt.duration(usage.b_wall),
            ("+" if (usage.wall_delta or 0) > 0 else "") + fmt.duration(usage.wall_delta),
            usage.wall_delta_pct,
            usage.wall_delta,
        )
    )
    _verdict(comparison, console)
    _notes(comparison, console)


def _verdict(comparison: RunComparison, console: Console) -> None:
    console.print()
    regressed = [t.name for t in comparison.tasks if t.regression]
    if regressed:
        console.print(
            Text(f" Regression in {len(regressed)} task(s): {', '.join(regressed)}", "bold red")
        )
    else:
        console.print(Text(" No regression.", style="green"))
    act = [t.name for t in comparison.tasks if t.activation_regression]
    if act:
        console.print(
            Text(f" Activation dropped in {len(act)} task(s): {', '.join(act)}", style="red")
        )


def _notes(comparison: RunComparison, console: Console) -> None:
    trigger_only = TaskStatus.TRIGGER_ONLY.value
    unmeasured = [
        t.name
        for t in comparison.tasks
        if (t.a_score is None or t.b_score is None)
        and not (t.a_status == trigger_only and t.b_status == trigger_only)
    ]
    lines: list[Text] = []
    if unmeasured:
        lines.append(
            Text(f" Not measured on both sides (left out of Δ): {', '.join(unmeasured)}", "dim")
        )
    if comparison.only_in_a:
        lines.append(Text(f" Only in before: {', '.join(comparison.only_in_a)}", style="dim"))
    if comparison.only_in_b:
        lines.append(Text(f" Only in after: {', '.join(comparison.only_in_b)}", style="dim"))
    for warning in comparison.warnings:
        lines.append(Text(f" ⚠ {warning}", style="yellow"))
    for drift in comparison.skill_drift:
        if not drift.warn:
            lines.append(
                Text(
                    f"   {drift.name} changed between runs — {drift.source_kind}, "
                    f"{(drift.a_ref or '?')[:7]} → {(drift.b_ref or '?')[:7]}",
                    style="dim",
                )
            )
    if lines:
        console.print()
        for line in lines:
            console.print(line)
