"""The report of ``caliper compare``: before → after per task with Δ, its interval and the
test's verdict, then the whole run, costs, the verdict and what the pair could detect."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from caliper.report import fmt, plain_table
from caliper.report.compare_explain import render_explain
from caliper.report.compare_spend_view import change_cells, shown_changes, unmeasured_note
from caliper.results.compare import (
    IMPROVED,
    NEVER_STARTED,
    NO_CHANGE,
    NOT_SIGNIFICANT,
    REGRESSED,
    RunComparison,
    SideState,
    TaskComparison,
    UsageDelta,
)
from caliper.results.scoring import TaskStatus

EPSILON = 1e-9

VERDICT_STYLE = {
    REGRESSED: "bold red",
    IMPROVED: "green",
    NOT_SIGNIFICANT: "yellow",
    NO_CHANGE: "dim",
}


def _level(comparison: RunComparison) -> str:
    return f"{comparison.confidence * 100:g}%"


def _delta_markup(
    delta: float | None, verdict: str, interval: str = "", *, stacked: bool = False
) -> str:
    if delta is None:
        return fmt.DASH
    text = fmt.signed_points(delta)
    if verdict == REGRESSED:
        text = f"[bold red]{text}[/bold red]"
    elif verdict == IMPROVED:
        text = f"[green]{text}[/green]"
    if not interval:
        return text
    return f"{text}\n[dim]{interval}[/dim]" if stacked else f"{text} [dim]{interval}[/dim]"


SHORT_VERDICT = {NOT_SIGNIFICANT: "n.s.", NO_CHANGE: "same"}


def _verdict_cell(
    verdict: str, p: float | None, *, stacked: bool = False, short: bool = False
) -> str:
    if p is None:
        return fmt.DASH
    style = VERDICT_STYLE.get(verdict, "")
    shown_verdict = SHORT_VERDICT.get(verdict, verdict) if short else verdict
    label = f"[{style}]{shown_verdict}[/{style}]" if style else shown_verdict
    shown = fmt.p_value(p)
    return f"{label}\n[dim]{shown}[/dim]" if stacked else f"{label} [dim]{shown}[/dim]"


def _pair(a: float | None, b: float | None) -> str:
    return f"{fmt.pct(a)} → {fmt.pct(b)}"


def _has_activation(comparison: RunComparison) -> bool:
    return any(t.a_activation is not None or t.b_activation is not None for t in comparison.tasks)


def _narrow_table() -> Table:
    return Table(box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 1, 0, 0))


def comparison_table(
    comparison: RunComparison,
    *,
    narrow: bool = False,
    short: bool = False,
    name_width: int | None = None,
) -> Table:
    """One row per matched task: before → after, Δ in points with its interval, the verdict
    of its test with its Holm-adjusted p. ``narrow`` stacks each interval and p under its value and
    leaves activation to the lines below the table; ``short`` writes ``not significant`` as
    ``n.s.`` and ``no change`` as ``same`` (a legend follows the table); ``name_width``
    replaces task names with a placeholder that wide (to measure a layout)."""
    table = _narrow_table() if narrow else Table()
    # Only the task name wraps: before → after figures and glyph strips are never cut.
    table.add_column("Task", overflow="fold", min_width=12)
    table.add_column("success", justify="right", no_wrap=True)
    table.add_column("Δ", justify="right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    activation = _has_activation(comparison) and not narrow
    if activation:
        table.add_column("activation", justify="right", no_wrap=True)
    table.add_column("attempts", no_wrap=True)
    for task in comparison.tasks:
        name = escape(task.name) if name_width is None else "x" * max(1, name_width)
        row = [
            name,
            _pair(task.a_score, task.b_score),
            _delta_markup(
                task.delta,
                task.verdict,
                fmt.signed_interval(task.delta_interval),
                stacked=narrow,
            ),
            _verdict_cell(task.verdict, task.p_adjusted, stacked=narrow, short=short),
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


def usage_delta_lines(usage: UsageDelta) -> list[Text]:
    """Tokens and agent time per attempt (like with like when the runs' k differ), then each
    run's wall clock, which depends on k and ``--workers`` and gets no percentage."""
    return [
        _cost_delta(
            "Tokens per attempt",
            fmt.tokens(usage.a_tokens_per_attempt),
            fmt.tokens(usage.b_tokens_per_attempt),
            _signed(fmt.tokens(usage.tokens_per_attempt_delta), usage.tokens_per_attempt_delta),
            usage.tokens_per_attempt_delta_pct,
            usage.tokens_per_attempt_delta,
        ),
        _cost_delta(
            "Agent time per attempt",
            fmt.seconds(usage.a_agent_per_attempt),
            fmt.seconds(usage.b_agent_per_attempt),
            _signed(fmt.seconds(usage.agent_per_attempt_delta), usage.agent_per_attempt_delta),
            usage.agent_per_attempt_delta_pct,
            usage.agent_per_attempt_delta,
        ),
        Text(
            f" {'Wall clock':<23}{fmt.clock_span(usage.a_wall_clock)} → "
            f"{fmt.clock_span(usage.b_wall_clock)}   (run start to end)",
        ),
    ]


def spend_change_lines(comparison: RunComparison) -> list[plain_table.StyledLine]:
    """Cost and agent time per attempt, before → after (means), with the permutation test's
    adjusted p and verdict (a change in cost or time is never a regression)."""
    line = plain_table.StyledLine
    changes = shown_changes(comparison.spend)
    lines = []
    if changes:
        lines.append(line(f" Cost and time changes ({comparison.spend_method})", style="dim"))
    for change in changes:
        what, means, delta, p, verdict = change_cells(change)
        style = {"increased": "red", "decreased": "green"}.get(verdict, "")
        text = f"   {what}: {means}  Δ {delta}  p(adj) {p}  "
        lines.append(line(text, tail=verdict, tail_style=style))
    note = unmeasured_note(comparison.spend)
    if note:
        lines.append(line(f" {note}", style="dim"))
    return lines


def _signed(text: str, raw: float | None) -> str:
    return ("+" if (raw or 0) > 0 else "") + text


def _cost_delta(label: str, a: str, b: str, delta: str, pct: float | None, raw: float | None):
    line = Text(f" {label:<23}{a} → {b}")
    if raw is None:
        return line
    shown = f"   Δ {pct * 100:+.0f}% ({delta})" if pct is not None else f"   Δ {delta}"
    # cheaper is good (green); dearer is a trade-off to weigh (red), never a regression
    line.append(shown, style="green" if raw < 0 else "red" if raw > 0 else "")
    return line


def _side_line(label: str, run_id: str, side: SideState) -> Text | None:
    if side.complete:
        return None
    reason = f": {side.reason.rstrip('. ')}" if side.reason else ""
    return Text(f"  ⚠ {label} ({run_id}) {side.phrase}{reason}.", style="bold yellow")


def _header(comparison: RunComparison, console: Console, allow_partial: bool = False) -> None:
    console.print(Rule(escape(f"CALIPER  —  compare  —  {comparison.spec_name}")))
    console.print(
        Text(
            f"    {comparison.title}   ·   k={comparison.k}   ·   {_level(comparison)}",
            style="dim",
        )
    )
    for line in (
        _side_line("before", comparison.a_run_id, comparison.a_side),
        _side_line("after", comparison.b_run_id, comparison.b_side),
    ):
        if line is not None:
            console.print(line)
    if not comparison.comparable:
        sides = (comparison.a_side, comparison.b_side)
        if any(side.state == NEVER_STARTED for side in sides):
            console.print(Text("  Nothing to compare: see the verdict below.", style="bold red"))
        elif allow_partial:
            console.print(Text("  Partial: see the verdict below.", style="yellow"))
        else:
            console.print(Text("  Not comparable: see the verdict below.", style="bold red"))


def _fits(console: Console, table: Table) -> bool:
    return plain_table.natural_width(console, table) <= console.width


def _laid_out_table(comparison: RunComparison, console: Console) -> tuple[Table, bool]:
    """The widest layout that fits: boxed with every column, else narrow (intervals and p
    stacked, activation below), else narrow with short verdicts; task names may wrap to 20
    columns. Returns the table and whether verdicts are short."""
    longest = max((len(t.name) for t in comparison.tasks), default=0)
    # names shown as written make each table as wide as its probe at their longest length:
    # those tables are measured themselves, not first probed
    measured = plain_table.shown_as_written(t.name for t in comparison.tasks)
    layouts = ((False, False), (True, False), (True, True))
    for name_width in (longest, min(longest, 20)):
        for narrow, short in layouts:
            if measured and name_width == longest:
                table = comparison_table(comparison, narrow=narrow, short=short)
                if _fits(console, table):
                    return table, short
                continue
            probe = comparison_table(comparison, narrow=narrow, short=short, name_width=name_width)
            if _fits(console, probe):
                return comparison_table(comparison, narrow=narrow, short=short), short
    return comparison_table(comparison, narrow=True, short=True), True


def render_compare(
    comparison: RunComparison,
    console: Console,
    *,
    explain: bool = False,
    allow_partial: bool = False,
) -> None:
    """Print ``comparison`` to ``console``; ``explain`` adds every test's detail and what the
    pair could have detected; ``allow_partial`` (``--allow-partial``) gives the verdict on what
    a partial side finished instead of refusing it."""
    _header(comparison, console, allow_partial)
    console.print()
    if comparison.tasks:
        table, short = _laid_out_table(comparison, console)
        plain_table.print_table(console, table)
        if short:
            console.print(Text(" n.s. = not significant; same = no change", style="dim"))
        if table.box is box.SIMPLE_HEAD:
            _activation_lines(comparison, console)
    else:
        console.print(Text("  No task appears in both runs.", style="yellow"))
    console.print()
    console.print(overall_line(comparison))
    headline = ablation_headline(comparison)
    if headline:
        console.print(Text(f" {headline}", style="bold"))
    activation = activation_overall_line(comparison)
    if activation is not None:
        console.print(activation)
    plain_table.print_lines(
        console, [*usage_delta_lines(comparison.usage), *spend_change_lines(comparison)]
    )
    _verdict(comparison, console, allow_partial)
    _notes(comparison, console)
    if explain:
        render_explain(comparison, console)
    elif _undecided(comparison):
        line = sensitivity_line(comparison)
        if line:
            console.print()
            console.print(Text(f" {line} (--explain: the detail)", style="dim"))


def overall_line(comparison: RunComparison) -> Text:
    """`` Overall  75.0% → 35.0%   Δ −40 pts [−62, −18] p<0.001``, over the tasks measured
    on both sides, with ``not significant`` when the change is not supported."""
    overall = Text(f" Overall  {_pair(comparison.a_overall, comparison.b_overall)}   ")
    if comparison.delta is None:
        overall.append("Δ —  no task measured on both sides", style="dim")
        return overall
    verdict = comparison.overall_verdict
    style = "green" if verdict == IMPROVED else "bold red" if verdict == REGRESSED else ""
    interval = fmt.signed_interval(comparison.delta_interval)
    p = fmt.p_value(comparison.p_adjusted)
    overall.append(f"Δ {fmt.signed_points(comparison.delta)}", style=style)
    tail = f" {interval} {p}"
    if verdict not in (REGRESSED, IMPROVED):
        tail += f" {verdict}"
    overall.append(tail, style="dim")
    return overall


def ablation_headline(comparison: RunComparison) -> str | None:
    """For an ablation pair (``--ablate X`` run → full run): ``X adds +40 pts [+18, +62],
    p=0.003``; the other way round ``without X: −40 pts [−62, −18], p=0.003``; either says
    when the difference is not significant."""
    if comparison.delta is None:
        return None
    interval = fmt.signed_interval(comparison.delta_interval)
    p = fmt.p_value(comparison.p_adjusted)
    change = fmt.signed_points(comparison.delta)
    if comparison.ablation is not None:
        sentence = f"{comparison.ablation} adds {change} {interval}, {p}"
    elif comparison.ablation_removed is not None:
        sentence = f"without {comparison.ablation_removed}: {change} {interval}, {p}"
    else:
        return None
    if comparison.overall_verdict not in (REGRESSED, IMPROVED):
        sentence += f" (not significant at {_level(comparison)})"
    return sentence


def activation_overall_line(comparison: RunComparison) -> Text | None:
    """The activation counterpart of the overall line (``None`` without activation)."""
    if comparison.activation_delta is None:
        return None
    line = Text(
        f" Activation  {_pair(comparison.a_activation_overall, comparison.b_activation_overall)}"
        f"   Δ {fmt.signed_points(comparison.activation_delta)} "
    )
    verdict = comparison.activation_overall_verdict
    interval = fmt.signed_interval(comparison.activation_delta_interval)
    line.append(f"{interval}, {fmt.p_value(comparison.activation_p_adjusted)}", style="dim")
    if verdict not in (REGRESSED, IMPROVED):
        line.append(f", {verdict}", style="dim")
    return line


def _activation_lines(comparison: RunComparison, console: Console) -> None:
    rows = [t for t in comparison.tasks if t.a_activation is not None or t.b_activation is not None]
    if not rows:
        return
    lines = [Text(" Activation per task:", style="bold")]
    for task in rows:
        line = Text(f"   {task.name}: {_pair(task.a_activation, task.b_activation)}")
        if task.activation_delta is not None:
            line.append(f"  Δ {fmt.signed_points(task.activation_delta)}")
            if task.activation_p_adjusted is not None:
                style = VERDICT_STYLE.get(task.activation_verdict, "")
                line.append(
                    f"  {task.activation_verdict} ({fmt.p_value(task.activation_p_adjusted)})",
                    style=style,
                )
        lines.append(line)
    plain_table.print_lines(console, lines)


def _verdict(comparison: RunComparison, console: Console, allow_partial: bool = False) -> None:
    console.print()
    level = _level(comparison)
    if not comparison.comparable:
        incomplete = [
            (label, side)
            for label, side in (("before", comparison.a_side), ("after", comparison.b_side))
            if not side.complete
        ]
        sides = " and ".join(f"{label} {side.phrase}" for label, side in incomplete)
        if any(side.state == NEVER_STARTED for _, side in incomplete):
            console.print(
                Text(
                    f" Nothing to compare: {sides}; a run that never started has no attempt "
                    "to compare.",
                    style="bold red",
                )
            )
            return
        if not allow_partial:
            console.print(
                Text(
                    f" Not comparable: {sides}; its numbers do not measure the "
                    "skill. Pass --allow-partial to compare what there is.",
                    style="bold red",
                )
            )
            return
        console.print(
            Text(f" Partial: {sides}; compared what finished (--allow-partial).", style="yellow")
        )
    regressed = [t for t in comparison.tasks if t.regression]
    if regressed:
        names = ", ".join(t.name for t in regressed)
        line = plain_table.StyledLine(
            f" Regression in {len(regressed)} task(s): {names}", "bold red"
        )
        plain_table.print_lines(console, [line])
    if comparison.overall_regression and comparison.matched_measured > 1:
        console.print(
            Text(
                f" Regression overall: {fmt.signed_points(comparison.delta)} "
                f"{fmt.signed_interval(comparison.delta_interval)}, "
                f"{fmt.p_value(comparison.p_adjusted)}",
                "bold red",
            )
        )
    if not regressed and not comparison.overall_regression:
        console.print(
            Text(
                f" No regression. (No drop is supported at {level}, family-wise corrected.)",
                style="green",
            )
        )
    unsupported = [
        t for t in comparison.tasks if t.verdict == NOT_SIGNIFICANT and (t.delta or 0) < 0
    ]
    if unsupported:
        parts = ", ".join(
            f"{t.name} ({fmt.signed_points(t.delta)}, not significant)" for t in unsupported
        )
        line = plain_table.StyledLine(f" Drops not supported by the data: {parts}", style="yellow")
        plain_table.print_lines(console, [line])
    act = [t.name for t in comparison.tasks if t.activation_regression]
    if act:
        line = plain_table.StyledLine(
            f" Activation dropped in {len(act)} task(s): {', '.join(act)}", style="red"
        )
        plain_table.print_lines(console, [line])
    if comparison.activation_overall_regression:
        console.print(
            Text(
                f" Activation dropped overall: {fmt.signed_points(comparison.activation_delta)}",
                style="red",
            )
        )


def _undecided(comparison: RunComparison) -> bool:
    """True when some change (or the whole) was left unsupported: the footer then says how
    small a drop the pair could have detected."""
    verdicts = [t.verdict for t in comparison.tasks] + [comparison.overall_verdict]
    return NOT_SIGNIFICANT in verdicts or comparison.overall_verdict == NO_CHANGE


def sensitivity_line(comparison: RunComparison) -> str:
    """The one-line summary of what this pair could detect (``""`` when nothing was
    measured): the smallest drop on every task the whole-run test would catch, a single
    task's, and the k that would catch the drop seen (or 20 points)."""
    sens = comparison.sensitivity
    if sens is None:
        return ""
    level = f"{sens.level * 100:g}%"
    tasks = f"{sens.tasks} task" + ("s" if sens.tasks != 1 else "")
    basis = f"{_k_label(sens.a_attempts, sens.b_attempts)}, {tasks}, {level}"
    line = f"Sensitivity ({basis}, {sens.power * 100:g}% power): "
    scope = " on every task" if sens.tasks > 1 else ""
    if sens.overall_drop is None:
        line += f"no drop{scope} is detectable"
    else:
        line += f"detects a drop of ≥{round(sens.overall_drop * 100)} pts{scope}"
    if sens.tasks > 1:
        alone = "none" if sens.task_drop is None else f"≥{round(sens.task_drop * 100)} pts"
        line += f"; one task alone: {alone}"
    if sens.k_needed is not None:
        line += f"; k={sens.k_needed} would detect a {round(sens.target_drop * 100)}-pt drop"
    return line + "."


def _k_label(a: float, b: float) -> str:
    if a == b and float(a).is_integer():
        return f"k={a:g}"
    return f"{a:.3g}→{b:.3g} usable per task"


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
        plain_table.print_lines(console, lines)
