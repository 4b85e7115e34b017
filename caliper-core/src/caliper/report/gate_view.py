"""The "Bars" section of a report: which case each bar (``--min-score``, ``--min-activation``,
``--max-cost-per-attempt``, ``--max-duration``) is in, with the interval it was judged on."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from caliper.results.gate import BarResult, BarVerdict, GateResult, format_measure, gate_from_data

VERDICT_STYLE = {
    BarVerdict.MET: ("✓ met", "green"),
    BarVerdict.FAILED: ("✗ failed", "red"),
    BarVerdict.INCONCLUSIVE: ("~ inconclusive", "yellow"),
    BarVerdict.UNMEASURED: ("⊘ unmeasured", "red"),
}


def measured_text(result: BarResult) -> str:
    """``8/10 = 80% [49–94.3%]`` (the counts only for a single task's rate); for a cost or
    time ceiling ``mean $0.21 [$0.18–$0.24] over 10 attempts``."""
    measured = result.measured
    metric = result.bar.metric
    parts = []
    if result.bar.ceiling:
        parts.append("mean")
    elif measured.trials is not None:
        parts.append(f"{measured.successes}/{measured.trials} =")
    parts.append("—" if measured.value is None else format_measure(metric, measured.value))
    if measured.interval is not None:
        interval = measured.interval
        low, high = format_measure(metric, interval.low), format_measure(metric, interval.high)
        parts.append(f"[{low}–{high}]")
    if result.bar.ceiling and measured.trials is not None:
        parts.append(f"over {measured.trials} attempt{'s' if measured.trials != 1 else ''}")
    return " ".join(parts)


def bar_lines(result: BarResult) -> list[Text]:
    """One bar on two short lines (readable at 80 columns): the verdict and what the bar
    asks, then the rate with its interval (and how an inconclusive bar counts)."""
    label, style = VERDICT_STYLE[result.verdict]
    head = Text.from_markup(f"  [{style}]{escape(label)}[/{style}]  ")
    head.append(result.bar.label)
    detail = Text("      " + measured_text(result), style="dim")
    if result.measured.anytime_valid:
        detail.append(f"  by the {result.measured.method_label}")
    if result.verdict is BarVerdict.INCONCLUSIVE:
        detail.append(f"  → counts as {'pass' if result.passed else 'fail'}")
    return [head, detail]


def render_gate(gate: GateResult, console: Console, title: str = "Bars") -> None:
    """Print the bars and the gate's overall verdict (``title`` heads the section)."""
    console.print()
    console.print(
        Text.from_markup(
            f"[bold] {escape(title)}[/bold]  [dim]({escape(gate.heading)}; inconclusive "
            f"counts as {gate.policy.value})[/dim]"
        )
    )
    for result in gate.bars:
        for line in bar_lines(result):
            console.print(line)
    failures = len(gate.failures)
    if gate.passed:
        console.print(Text(f" Gate: PASSED ({len(gate.bars)} of {len(gate.bars)} bars)", "green"))
    else:
        console.print(
            Text(f" Gate: FAILED ({failures} of {len(gate.bars)} bars not met)", "bold red")
        )


def render_saved_gate(data: object, console: Console, title: str) -> None:
    """Print the bars a run was held to when it ran (its ``meta.gate``), as they were
    judged then, under ``title``; nothing when the stored block cannot be read."""
    gate = gate_from_data(data)
    if gate is not None:
        render_gate(gate, console, title=title)
