"""``--format markdown``: a run (and its bars) as GitHub-flavoured Markdown.

Meant for ``$GITHUB_STEP_SUMMARY`` (or a pull-request comment): a heading, one table row per
task with its rate, interval and attempt strip, the run's score, and, when bars were given,
a table saying which case each bar is in. Every piece of user text (task names, reasons) is
escaped, so a ``|`` cannot break a table and ``*``/``_``/``<`` cannot turn into markup.
Standard library only.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from caliper.report.fmt import STRIP_SYMBOLS
from caliper.report.spend_view import (
    SPREAD_NOTE,
    cost_spread_text,
    cost_total_text,
    time_text,
    wall_text,
)
from caliper.report.tool_usage_view import run_tool_usage
from caliper.results.gate import BarVerdict, format_fraction, format_measure
from caliper.results.meta_labels import derived_sentence
from caliper.results.models import Outcome, RunResults
from caliper.results.scoring import TaskStatus, score_run
from caliper.results.spend import spend_of

if TYPE_CHECKING:
    from caliper.results.gate import BarResult, GateResult
    from caliper.results.stats import Interval

DASH = "—"

# ASCII punctuation that Markdown (CommonMark + GFM tables) may read as syntax; a backslash
# before any ASCII punctuation is always taken literally, so escaping these is safe.
_MARKUP = re.compile(r"([\\`*_{}\[\]()#+\-.!|~:>])")

STATUS_LABEL = {
    TaskStatus.PASS: "✅ PASS",
    TaskStatus.PARTIAL: "⚠️ PARTIAL",
    TaskStatus.FAIL: "❌ FAIL",
    TaskStatus.ABORTED: "⛔ ABORTED",
    TaskStatus.UNMEASURED: "⛔ UNMEASURED",
    TaskStatus.TRIGGER_ONLY: "🔷 TRIGGER-ONLY",
}

VERDICT_LABEL = {
    BarVerdict.MET: "✅ met",
    BarVerdict.FAILED: "❌ failed",
    BarVerdict.INCONCLUSIVE: "❔ inconclusive",
    BarVerdict.UNMEASURED: "⛔ unmeasured",
}


def escape(text: str) -> str:
    """``text`` safe inside a Markdown table cell: markup characters backslash-escaped,
    ``&``/``<`` as entities (no HTML gets through), line breaks as spaces."""
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    text = " ".join(text.splitlines())
    return _MARKUP.sub(r"\\\1", text)


def strip(outcomes: list[Outcome]) -> str:
    """The attempt strip as plain symbols (``✓✓✗``)."""
    return "".join(STRIP_SYMBOLS[Outcome(o)][0] for o in outcomes) or DASH


def interval_text(interval: Interval | None) -> str:
    """``72.2%–100%`` or ``—``."""
    if interval is None:
        return DASH
    return f"{format_fraction(interval.low)}–{format_fraction(interval.high)}"


def _rate(value: float | None) -> str:
    return DASH if value is None else format_fraction(value)


def _ceiling_cells(result: BarResult) -> tuple[str, str]:
    """A cost or time ceiling's "Rate" and "Interval" cells: the mean (over N attempts) and
    its Student-t interval, in the bar's unit."""
    measured, metric = result.measured, result.bar.metric
    if measured.value is None:
        return DASH, DASH
    mean = f"mean {format_measure(metric, measured.value)} ({measured.trials} attempts)"
    interval = measured.interval
    if interval is None:
        return mean, DASH
    return mean, f"{format_measure(metric, interval.low)}–{format_measure(metric, interval.high)}"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def run_markdown(
    results: RunResults,
    *,
    confidence: float,
    gate: GateResult | None = None,
    gate_title: str = "Bars",
) -> str:
    """The whole Markdown summary of a run (ends with a newline); ``gate_title`` heads the
    bars section."""
    meta = results.meta
    run = score_run(results, confidence)
    engine = ":".join(p for p in (meta.backend, meta.model) if p) or "unknown engine"
    level = format_fraction(confidence)
    lines = [f"## Caliper: {escape(meta.spec_name)} ({escape(engine)})", ""]
    details = [f"run `{meta.run_id}`", f"k={meta.k}", f"{level} intervals"]
    if meta.ablated:
        details.append("without " + ", ".join(escape(n) for n in meta.ablated))
    lines += [" · ".join(details), ""]
    derived = derived_sentence(meta)
    if derived:
        lines += [f"> **Derived run.** {escape(derived)}", ""]
    if meta.partial:
        reason = f": {escape(meta.stop_reason)}" if meta.stop_reason else ""
        lines += [f"> **Partial run**{reason}. Scores cover only what finished.", ""]
    activation = run.asserts_activation
    header = ["Task", "Passed", "Success", f"{level} interval"]
    header += ["Activation"] if activation else []
    header += ["Attempts", "Status"]
    lines.append(_row(header))
    lines.append(
        _row(["---", "---:", "---:", "---", *(["---:"] if activation else []), "---", "---"])
    )
    for task, score in zip(results.tasks, run.tasks, strict=True):
        cells = [
            escape(task.name),
            f"{score.successes}/{score.usable}" if score.usable else DASH,
            _rate(score.score),
            interval_text(score.score_interval),
        ]
        if activation:
            cells.append(
                f"{score.activation_successes}/{score.activation_usable}"
                if score.activation_usable
                else DASH
            )
        cells += [strip([a.outcome for a in task.attempts]), STATUS_LABEL[score.status]]
        lines.append(_row(cells))
    lines.append("")
    score_line = (
        f"**Score** {_rate(run.score)} [{interval_text(run.score_interval)}] over "
        f"{run.scored_tasks} of {len(run.tasks)} tasks"
    )
    if run.activation_tasks:
        score_line += (
            f" · **Activation** {_rate(run.avg_activation_score)} "
            f"[{interval_text(run.activation_interval)}] over {run.activation_tasks} tasks"
        )
    if run.unusable:
        score_line += f" · ⊘ {run.unusable} unusable attempts (not counted)"
    lines += [score_line, ""]
    lines += spend_markdown(results, confidence)
    lines += mcp_markdown(results)
    if gate is not None:
        lines += gate_markdown(gate, gate_title)
    return "\n".join(lines).rstrip("\n") + "\n"


def mcp_markdown(results: RunResults) -> list[str]:
    """Calls per MCP server and tool as a Markdown table (nothing when none was called)."""
    if not any(a.transcript for t in results.tasks for a in t.attempts):
        return []
    usage = run_tool_usage(results)
    if not usage.servers:
        return []
    lines = ["### MCP calls", "", _row(["Server", "Tool", "Calls", "Errors", "Attempts"])]
    lines.append(_row(["---", "---", "---:", "---:", "---:"]))
    for server in usage.servers:
        name = escape(server.name) + (" (ablated)" if server.ablated else "")
        lines.append(
            _row([name, "all tools", str(server.calls), str(server.errors), str(server.attempts)])
        )
        for tool in server.tools:
            cells = [str(tool.calls), str(tool.errors), str(tool.attempts)]
            lines.append(_row(["", escape(tool.name), *cells]))
    return [*lines, ""]


def spend_markdown(results: RunResults, confidence: float) -> list[str]:
    """The cost and agent-time table (per task, then the run), as Markdown lines."""
    policy = results.meta.timeouts
    rows = [(escape(t.name), spend_of(t.attempts, confidence, policy)) for t in results.tasks]
    every = (a for t in results.tasks for a in t.attempts)
    rows.append(("whole run", spend_of(every, confidence, policy)))
    lines = [
        f"### Cost and time ({escape(SPREAD_NOTE)})",
        "",
        _row(["", "Cost", "Cost per attempt", "Agent time per attempt", "Wall time per attempt"]),
        _row(["---", "---", "---", "---", "---"]),
    ]
    for name, spend in rows:
        cells = [
            cost_total_text(spend),
            cost_spread_text(spend),
            time_text(spend),
            wall_text(spend),
        ]
        lines.append(_row([name, *(escape(cell) for cell in cells)]))
    return [*lines, ""]


def gate_markdown(gate: GateResult, title: str = "Bars") -> list[str]:
    """The bars table and the gate's verdict, as Markdown lines (under ``### title``)."""
    lines = [
        f"### {title} ({gate.heading}; inconclusive counts as {gate.policy.value})",
        "",
        _row(["Bar", "Verdict", "Rate", "Interval", "Counts as"]),
        _row(["---", "---", "---:", "---", "---"]),
    ]
    for result in gate.bars:
        measured = result.measured
        if result.bar.ceiling:
            rate, shown = _ceiling_cells(result)
        else:
            rate, shown = _rate(measured.value), interval_text(measured.interval)
            if measured.trials is not None:
                rate = f"{measured.successes}/{measured.trials} = {rate}"
        lines.append(
            _row(
                [
                    escape(result.bar.label),
                    VERDICT_LABEL[result.verdict],
                    rate,
                    shown,
                    "pass" if result.passed else "**fail**",
                ]
            )
        )
    failures = len(gate.failures)
    lines.append("")
    if gate.passed:
        lines.append(f"**Gate: PASSED** ({len(gate.bars)} of {len(gate.bars)} bars)")
    else:
        lines.append(f"**Gate: FAILED** ({failures} of {len(gate.bars)} bars not met)")
    return [*lines, ""]
