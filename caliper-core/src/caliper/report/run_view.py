"""The report of one run: header, task table, score, activation, usage, failures."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich import box
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from caliper.report import fmt, plain_table
from caliper.report.fmt import when_label
from caliper.results.legacy import LEGACY_NAME, LEGACY_SCHEMA
from caliper.results.meta_labels import ablated_names, derived_sentence, user_setup_label
from caliper.results.models import (
    SCHEMA_VERSION,
    AttemptRecord,
    Outcome,
    RunMeta,
    RunResults,
    TaskResult,
)
from caliper.results.run_clock import RunClock, run_clock
from caliper.results.scoring import RunScore, TaskScore, TaskStatus, UsageTotals, score_run
from caliper.results.stats import DEFAULT_CONFIDENCE

# Below this many columns the task table is laid out compactly (see ``task_table``).
NARROW_WIDTH = 110

STATUS_STYLE = {
    TaskStatus.PASS: ("✓ PASS", "green"),
    TaskStatus.PARTIAL: ("~ PARTIAL", "yellow"),
    TaskStatus.FAIL: ("✗ FAIL", "red"),
    TaskStatus.ABORTED: ("⊘ ABORTED", "red"),
    TaskStatus.UNMEASURED: ("⊘ UNMEASURED", "yellow"),
    TaskStatus.TRIGGER_ONLY: ("◇ TRIGGER-ONLY", "cyan"),
}

OUTCOME_LABEL = {
    Outcome.PASS: "pass",
    Outcome.TASK_FAIL: "task failed",
    Outcome.CHEAT: "cheat (read a forbidden file)",
    Outcome.INFRA_ERROR: "infrastructure error (not counted)",
    Outcome.TIMEOUT: "timed out (a failed attempt unless --timeouts unusable)",
    Outcome.JUDGE_ERROR: "judge error (not counted)",
    Outcome.NOT_CHECKED: "not checked (trigger probe)",
}


def attempt_verdict(record: AttemptRecord) -> tuple[str, str, str]:
    """``(symbol, style, label)`` naming what went wrong in an attempt: its outcome, unless
    the outcome passed and something else failed (the activation check) or is worth a look
    (a skill the spec does not declare, a built-in skill), which then leads."""
    symbol, style = fmt.STRIP_SYMBOLS[record.outcome]
    label = OUTCOME_LABEL[record.outcome]
    ran_fine = record.outcome in (Outcome.PASS, Outcome.NOT_CHECKED)
    if record.activation_passed is False:
        if record.outcome is Outcome.PASS:
            return "✗", "red", "activation check failed (the task's checks passed)"
        if ran_fine:
            return "✗", "red", "activation check failed"
        return symbol, style, f"{label}; activation check failed"
    if ran_fine and record.built_in:
        return "!", "yellow", f"a built-in skill won this prompt: {', '.join(record.built_in)}"
    if ran_fine and record.undeclared:
        return (
            "!",
            "yellow",
            f"loaded a skill the spec does not declare: {', '.join(record.undeclared)}",
        )
    return symbol, style, label


def engine_label(backend: str | None, model: str | None) -> str:
    """``backend:model`` as far as known."""
    return ":".join(p for p in (backend, model) if p) or "unknown engine"


def _header(meta: RunMeta, console: Console) -> None:
    title = (
        f"CALIPER  —  {meta.spec_name}  ({engine_label(meta.backend, meta.model)})  —  "
        f"{when_label(meta.started_at)} UTC"
    )
    console.print(Rule(escape(title)))
    ablated = ablated_names(meta)
    details = [f"run {meta.run_id}", f"k={meta.k}"]
    if ablated:
        details.append(f"without {', '.join(ablated)}")
    if meta.judge_backend or meta.judge_model:
        details.append(f"judge {engine_label(meta.judge_backend, meta.judge_model)}")
    if meta.matrix:  # one engine of a matrix, a shard, a merged run
        details.append(f"matrix {meta.matrix.get('id')}")
    if meta.merged_from:
        details.append(f"merged from {len(meta.merged_from)} shards")
    console.print(Text("  " + "   ·   ".join(details), style="dim"))
    derived = derived_sentence(meta)
    if derived:
        console.print(Text(f"  {derived}", style="yellow"), soft_wrap=True)
        for change in meta.changes:
            console.print(Text(f"    {change}", style="dim"), soft_wrap=True)
    if meta.user_customizations:
        console.print(
            Text(f"  With your own setup loaded: {user_setup_label(meta)}", style="yellow"),
            soft_wrap=True,
        )
    if meta.schema_version == LEGACY_SCHEMA:
        console.print(
            Text(
                f"  Saved by {LEGACY_NAME}: read as it is, read-only (list, report, compare).",
                style="yellow",
            ),
            soft_wrap=True,
        )
    if meta.schema_version > SCHEMA_VERSION:
        console.print(
            Text(
                f"  Saved by a newer caliper (schema {meta.schema_version}); "
                "fields this version does not know are not shown.",
                style="yellow",
            )
        )
    if meta.partial:
        reason = f": {meta.stop_reason.rstrip('. ')}" if meta.stop_reason else ""
        console.print(
            Text(f"  Partial run{reason}. Scores cover only what finished.", style="yellow")
        )


def _loaded_union(task: TaskResult) -> str:
    names: list[str] = []
    for record in task.attempts:
        for name in record.activated or ():
            if name not in names:
                names.append(name)
    return ", ".join(names)


def _activation_cell(task: TaskResult, score: TaskScore, *, stacked: bool = False) -> str:
    if task.activation_expected is None:
        loaded = _loaded_union(task)
        return f"[dim]{escape(loaded)}[/dim]" if loaded else fmt.DASH
    if not score.activation_usable:
        return fmt.DASH
    style = "green" if score.activation_successes == score.activation_usable else "yellow"
    cell = f"[{style}]{score.activation_successes}/{score.activation_usable}[/{style}]"
    if stacked:
        bounds = fmt.interval(score.activation_interval, digits=0)
        return f"{cell}\n[dim]{bounds}[/dim]" if bounds else cell
    bounds = fmt.interval(score.activation_interval)
    return f"{cell} [dim]{bounds}[/dim]" if bounds else cell


def _k_cell(score: TaskScore) -> str:
    if score.status is TaskStatus.TRIGGER_ONLY:
        return fmt.DASH
    cell = f"{score.successes}/{score.usable}"
    if score.timeouts and score.timeouts_counted:  # failures, shown apart from task_fail
        cell += f" [red]◷{score.timeouts}[/red]"
    if score.unusable:
        cell += f" [yellow]⊘{score.unusable}[/yellow]"
    return cell


def _laid_out_task_table(
    results: RunResults, run: RunScore, console: Console, *, verbose: bool
) -> Table:
    """The task table with intervals beside their rates when that fits the console with task
    names on one line (or at least 20 columns wide), else with each interval under its rate."""
    narrow = console.width < NARROW_WIDTH
    longest = max((len(t.name) for t in results.tasks), default=0)
    measured = plain_table.shown_as_written(t.name for t in results.tasks)
    if measured:
        # each name takes as many columns as it has characters, so the table itself is as
        # wide as the first probe would be: measure it instead of building that probe
        table = task_table(results, run, verbose=verbose, narrow=narrow, stacked=False)
        if _natural_width(console, table) <= console.width:
            return table
    for name_width in (longest, min(longest, 20)):
        for stacked in (False, True):
            if measured and (name_width, stacked) == (longest, False):
                continue  # measured above: it does not fit
            probe = task_table(
                results,
                run,
                verbose=verbose,
                narrow=narrow,
                stacked=stacked,
                name_width=name_width,
            )
            if _natural_width(console, probe) <= console.width:
                return task_table(results, run, verbose=verbose, narrow=narrow, stacked=stacked)
    return task_table(results, run, verbose=verbose, narrow=narrow, stacked=True)


def _natural_width(console: Console, table: Table) -> int:
    return plain_table.natural_width(console, table)


def task_table(
    results: RunResults,
    run: RunScore,
    *,
    verbose: bool,
    narrow: bool = False,
    stacked: bool = False,
    name_width: int | None = None,
) -> Table:
    """The per-task table of a run.

    Only the task name wraps (on words): the numbers, glyphs and status labels keep their
    width instead of being cut to "…". ``narrow`` (a terminal under ``NARROW_WIDTH``
    columns) drops the vertical rules and the pass@k / pass^k columns (the ``--verbose``
    panels show those) so that an 80-column terminal still fits the table.
    """
    k = results.meta.k
    if narrow:
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 1, 0, 0))
    else:
        table = Table(show_lines=False)
    table.add_column("Task", overflow="fold", min_width=12)
    table.add_column(f"k ({k})", justify="center", no_wrap=True)
    table.add_column("success", justify="right", no_wrap=True)
    if verbose and not narrow:
        table.add_column("pass@k", justify="right", no_wrap=True)
        table.add_column("pass^k", justify="right", no_wrap=True)
    if run.asserts_activation:
        table.add_column("activation", justify="center", no_wrap=True)
    table.add_column("Tokens", justify="right", no_wrap=True)
    table.add_column("Time", justify="right", no_wrap=True)
    table.add_column("attempts", no_wrap=True)
    table.add_column("", no_wrap=True)
    for task, score in zip(results.tasks, run.tasks, strict=True):
        label, style = STATUS_STYLE[score.status]
        success = fmt.pct_interval(score.score, score.score_interval, stacked=stacked)
        name = escape(task.name) if name_width is None else "x" * max(name_width, 1)
        row = [name, _k_cell(score), success]
        if verbose and not narrow:
            row += [fmt.pct(score.pass_at_k), fmt.pct(score.pass_hat_k)]
        if run.asserts_activation:
            row.append(_activation_cell(task, score, stacked=stacked))
        row += [
            fmt.tokens(score.usage.total_tokens),
            fmt.duration(score.usage.wall_seconds),
            fmt.strip_markup([a.outcome for a in task.attempts]),
            f"[{style}]{label}[/{style}]",
        ]
        table.add_row(*row)
    return table


def _score_lines(run: RunScore, console: Console) -> None:
    line = Text(" Score       ", style="bold")
    line.append(f"{fmt.pct(run.score):>6} ")
    line.append(f"{fmt.interval(run.score_interval):<13} ", style="dim")
    line.append(fmt.bar(run.score), style="green" if run.score is not None else "dim")
    if run.unusable:
        line.append(f"   ⊘ {run.unusable} unusable", style="yellow")
    console.print(line)
    if run.activation_tasks:
        act = Text(" Activation  ", style="bold")
        act.append(f"{fmt.pct(run.avg_activation_score):>6} ")
        act.append(f"{fmt.interval(run.activation_interval):<13} ", style="dim")
        act.append(fmt.bar(run.avg_activation_score), style="cyan")
        act.append(f"   over {run.activation_tasks} tasks", style="dim")
        console.print(act)
    basis = sample_line(run)
    if basis:
        console.print(Text(basis, style="dim"))


def _span(counts: list[int]) -> str:
    low, high = min(counts), max(counts)
    return str(low) if low == high else f"{low}–{high}"


def sample_line(run: RunScore) -> str:
    """One line saying what the intervals rest on: the level, the usable attempts behind each
    task's rate and the tasks behind the score (``""`` when nothing was measured)."""
    usable = [t.usable for t in run.tasks if t.usable]
    if not usable:
        return ""
    level = f"{run.confidence * 100:g}%"
    plural = "s" if max(usable) != 1 else ""
    total = len(run.tasks)
    tasks = f"{len(usable)} of {total}" if len(usable) < total else str(total)
    noun = "task" if total == 1 else "tasks"
    return (
        f" {level} intervals rest on {_span(usable)} usable attempt{plural} per task; "
        f"the score on {tasks} {noun}"
    )


def outside_loads(results: RunResults) -> list[tuple[str, str, int]]:
    """Skills loaded from outside the declared neighbourhood: ``(name, kind, attempts)`` with
    kind ``undeclared`` (e.g. a user-level skill) or ``built-in`` (shipped with the CLI)."""
    counts: dict[tuple[str, str], int] = {}
    for task in results.tasks:
        for record in task.attempts:
            for kind, names in (("undeclared", record.undeclared), ("built-in", record.built_in)):
                for name in dict.fromkeys(names):
                    counts[(name, kind)] = counts.get((name, kind), 0) + 1
    return [(name, kind, fired) for (name, kind), fired in counts.items()]


def activation_table(
    run: RunScore, *, narrow: bool = False, outside: Sequence[tuple[str, str, int]] = ()
) -> Table:
    """Recall and precision of each declared skill, with their intervals (under the rate
    when ``narrow``); then the skills loaded from outside the neighbourhood (``outside``,
    see :func:`outside_loads`), with how many attempts loaded them and no score."""
    table = Table(title="Activation", title_justify="left")
    table.add_column("Skill")
    for column in ("expected", "fired", "hits", "recall", "precision"):
        table.add_column(column, justify="right")
    for skill in run.activation_per_skill:
        name = escape(skill.skill) + (" [dim](ablated)[/dim]" if skill.ablated else "")
        table.add_row(
            name,
            str(skill.expected),
            str(skill.fired),
            str(skill.hits),
            fmt.pct_interval(skill.recall, skill.recall_interval, stacked=narrow),
            fmt.pct_interval(skill.precision, skill.precision_interval, stacked=narrow),
        )
    for name, kind, fired in outside:
        label = "not declared" if kind == "undeclared" else "built-in, not scored"
        table.add_row(
            f"{escape(name)} [dim]({label})[/dim]",
            fmt.DASH,
            str(fired),
            fmt.DASH,
            fmt.DASH,
            fmt.DASH,
        )
    return table


def clock_text(clock: RunClock | None) -> str:
    """``9m 35s`` (run start to end), with what a resume adds to it."""
    if clock is None:
        return fmt.DASH
    text = fmt.clock_span(clock.seconds)
    if clock.resumes:
        times = "once" if clock.resumes == 1 else f"{clock.resumes} times"
        text += (
            f"  (resumed {times}: first start to last end, pauses included; "
            f"last session {fmt.clock_span(clock.last_session_seconds)})"
        )
    return text


def mcp_lines(results: RunResults) -> list[Text]:
    """Calls per MCP server and tool (nothing when no attempt called one)."""
    from caliper.report.tool_usage_view import run_tool_usage, usage_lines

    if not any(a.transcript for t in results.tasks for a in t.attempts):
        return []
    shown = usage_lines(run_tool_usage(results))
    if not shown:
        return []
    return [Text(" MCP calls"), *(Text(f"   {line}") for line in shown)]


def spend_lines(results: RunResults, confidence: float) -> list[plain_table.StyledLine]:
    """Cost and agent time per attempt, run-wide and (with several tasks) per task."""
    from caliper.report.spend_view import (
        SPREAD_NOTE,
        cost_spread_text,
        cost_total_text,
        time_text,
        wall_text,
    )
    from caliper.results.spend import spend_of

    line = plain_table.StyledLine
    policy = results.meta.timeouts
    run = spend_of((a for t in results.tasks for a in t.attempts), confidence, policy)
    lines = [line(f" Cost     {cost_total_text(run)}")]
    if run.cost is not None:
        lines.append(line(f"   per attempt  {cost_spread_text(run)}"))
    lines.append(line(f" Agent time per attempt  {time_text(run)}"))
    lines.append(line(f" Wall time per attempt   {wall_text(run)} (retries included)"))
    if len(results.tasks) > 1:
        for task in results.tasks:
            spend = spend_of(task.attempts, confidence, policy)
            lines.append(line(f"   {task.name}", style="bold dim"))
            if spend.cost is not None:
                lines.append(line(f"     cost  {cost_spread_text(spend)}", style="dim"))
            lines.append(line(f"     time  {time_text(spend)}", style="dim"))
            lines.append(line(f"     wall  {wall_text(spend)}", style="dim"))
    lines.append(line(f" {SPREAD_NOTE}", style="dim"))
    return lines


def usage_lines(usage: UsageTotals, clock: RunClock | None = None) -> list[Text]:
    """The tokens / time summary, with the unusable slice on its own line: the run's wall
    clock (when ``clock`` is given), then the agent time (the attempts' durations summed)."""
    lines = [
        Text(f" Tokens   {fmt.tokens(usage.tokens_in)} in / {fmt.tokens(usage.tokens_out)} out"),
    ]
    if clock is not None:
        lines.append(Text(f" Wall clock  {clock_text(clock)}"))
    lines.append(
        Text(
            f" Agent time  {fmt.duration(usage.wall_seconds)}  "
            f"{fmt.seconds(usage.wall_per_attempt)} per attempt (attempts' durations summed)"
        )
    )
    if usage.judge_tokens:
        lines.append(
            Text(f" Judge    {fmt.tokens(usage.judge_tokens)} tokens spent grading (not above)")
        )
    if usage.unusable_attempts:
        plural = "s" if usage.unusable_attempts != 1 else ""
        lines.append(
            Text(
                f" ⊘ unusable spend: {fmt.tokens(usage.unusable_tokens)} tokens, "
                f"{fmt.duration(usage.unusable_wall_seconds)}  ({usage.unusable_attempts} "
                f"attempt{plural}, not counted in the average)",
                style="yellow",
            )
        )
    return lines


def _needs_panel(record: AttemptRecord) -> bool:
    if record.activation_passed is False or record.undeclared or record.built_in:
        return True
    return record.outcome not in (Outcome.PASS, Outcome.NOT_CHECKED)


def attempt_body(task: TaskResult, record: AttemptRecord, *, answer: bool = True) -> Group:
    """What one attempt went through: reason, failed checks, activation, answer tail."""
    parts: list[Text] = []
    if record.reason:
        parts.append(Text(fmt.tail(record.reason, lines=20, chars=1500)))
    if record.error and record.error != record.reason:
        error = fmt.tail(record.error, lines=20, chars=1500)
        parts.append(Text(f"error: {error}", style="red"))
    activation_said = False
    for check in record.checks:
        if check.passed is True:
            continue
        verdict = "no verdict" if check.passed is None else "failed"
        detail = check.error or check.reason or ""
        if record.reason and detail and detail in record.reason:
            continue  # the attempt's reason above already says it
        # A failing check printed here that did not decide the outcome (its detail is not in
        # the reason) is the activation check when activation failed: the line below would
        # only repeat it. Results do not record which key's judge scores activation.
        activation_said = activation_said or (
            record.activation_passed is False and check.passed is False and bool(detail)
        )
        detail = fmt.tail(detail, lines=20, chars=1500)
        parts.append(Text(f"{check.key}: {verdict}" + (f": {detail}" if detail else "")))
    if (
        task.activation_expected is not None
        and record.activation_passed is False
        and not activation_said
    ):
        loaded = "unknown" if record.activated is None else ", ".join(record.activated) or "none"
        expected = ", ".join(task.activation_expected) or "none"
        parts.append(Text(f"activation: expected [{expected}], loaded [{loaded}]"))
    if record.undeclared:
        names = ", ".join(record.undeclared)
        parts.append(Text(f"loaded skills the spec does not declare: {names}", style="yellow"))
    if record.built_in:
        names = ", ".join(record.built_in)
        parts.append(
            Text(
                f"a built-in skill won this prompt: {names} (shipped with the agent CLI; "
                "seen, not scored)",
                style="yellow",
            )
        )
    if record.forbidden_reads:
        parts.append(Text("forbidden reads: " + ", ".join(record.forbidden_reads), style="red"))
    if answer and record.final_answer:
        parts.append(Text("final answer (end):", style="dim"))
        parts.append(Text(fmt.tail(record.final_answer)))
    return Group(*parts) if parts else Group(Text("(no details recorded)", style="dim"))


def titled_panel(body: RenderableType, title: str, width: int | None) -> Panel:
    """A panel titled ``title`` (markup); when the title would not fit in ``width`` columns
    (rich cuts it with "…"), it becomes the panel's first line, which wraps instead."""
    if width is not None and not plain_table.panel_title_fits(title, width):
        return _title_inside_panel(body, title)
    return Panel(body, title=title, title_align="left")


def _title_inside_panel(body: RenderableType, title: str) -> Panel:
    """A panel whose first line is ``title`` (markup), wrapping as it needs."""
    return Panel(Group(Text.from_markup(title, style="bold"), body))


def failure_panels(results: RunResults, width: int | None = None) -> list[Panel]:
    """One panel per attempt that did not pass (or whose activation check failed).

    A title too long for ``width`` columns (rich would cut it with "…", often through the
    verdict) becomes the panel's first, wrapping line instead.
    """
    panels = []
    for task in results.tasks:
        for record in task.attempts:
            if not _needs_panel(record):
                continue
            symbol, style, label = attempt_verdict(record)
            title = (
                f"{escape(task.name)} — attempt {record.attempt} — "
                f"[{style}]{symbol} {escape(label)}[/{style}]"
            )
            panels.append(titled_panel(attempt_body(task, record), title, width))
    return panels


def print_task_panel(console: Console, task: TaskResult, score: TaskScore) -> None:
    """Print the panel of every attempt of one task with its numbers (``--verbose``): the
    :func:`titled_panel` of its table, laid out by :mod:`plain_table` when it can be."""
    table, title = _task_panel_parts(task, score)
    if plain_table.panel_title_fits(title, console.width):
        plain_table.print_panel(console, table, title)
    else:
        console.print(_title_inside_panel(table, title))


def _task_panel_parts(task: TaskResult, score: TaskScore) -> tuple[Table, str]:
    """The table of every attempt of ``task`` and the title (markup) of its panel."""
    table = Table(box=None, show_header=True, pad_edge=False)
    for column in ("#", "outcome", "wall", "tokens", "loaded", "why"):
        table.add_column(column, overflow="fold")
    for record in task.attempts:
        symbol, style = fmt.STRIP_SYMBOLS[record.outcome]
        loaded = fmt.DASH if record.activated is None else ", ".join(record.activated) or "none"
        why = record.reason or "; ".join(f"{c.key}: {c.reason}" for c in record.checks if c.reason)
        why = why if len(why) <= 200 else why[:199] + "…"
        table.add_row(
            str(record.attempt),
            f"[{style}]{symbol}[/{style}] {record.outcome.value}",
            fmt.duration(record.duration_seconds),
            fmt.tokens(record.usage.total_tokens if record.usage else None),
            escape(loaded),
            escape(why or ""),
        )
    title = (
        f"{escape(task.name)} — {score.successes}/{score.usable} usable, "
        f"pass@k {fmt.pct(score.pass_at_k)}, pass^k {fmt.pct(score.pass_hat_k)}"
    )
    return table, title


def _adaptive_lines(results: RunResults, console: Console) -> None:
    """``--k auto``: each task's k as run and why it stopped."""
    if not results.meta.adaptive:
        return
    console.print()
    console.print(Text(f"  Adaptive k (--max-k {results.meta.adaptive.get('max_k')}):"))
    for task in results.tasks:
        reason = task.stop_reason or "stopped with the run"
        line = f"    {task.name}: k = {len(task.attempts)}, {reason}"
        console.print(Text(line, style="dim"), soft_wrap=True)


def render_run(
    results: RunResults,
    console: Console,
    *,
    verbose: bool = False,
    path: Path | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    saved: bool = True,
) -> None:
    """Print the whole report of ``results`` to ``console``; ``path`` is where it was saved
    (``saved``) or read from (``saved=False``: ``caliper report`` of a saved run); intervals
    are at ``confidence``."""
    run = score_run(results, confidence)
    _header(results.meta, console)
    console.print()
    if results.tasks:
        plain_table.print_table(
            console, _laid_out_task_table(results, run, console, verbose=verbose)
        )
    else:
        console.print(Text("  No task was run.", style="yellow"))
    if verbose:
        for task, score in zip(results.tasks, run.tasks, strict=True):
            print_task_panel(console, task, score)
    _adaptive_lines(results, console)
    console.print()
    _score_lines(run, console)
    outside = outside_loads(results)
    if run.asserts_activation or outside:
        console.print()
        narrow = console.width < NARROW_WIDTH
        console.print(activation_table(run, narrow=narrow, outside=outside))
    console.print()
    plain_table.print_lines(
        console,
        [
            *usage_lines(run.usage, run_clock(results.meta)),
            *spend_lines(results, confidence),
            *mcp_lines(results),
        ],
    )
    panels = failure_panels(results, console.width)
    if panels:
        console.print()
        console.print(Rule("Attempts that did not pass", style="dim"))
        for panel in panels:
            console.print(panel)
    if path is not None:
        console.print()
        verb = "Results saved to" if saved else "Read from"
        console.print(Text(f"{verb} {path}"), soft_wrap=True)
