"""Tables for ``caliper list``."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from caliper.report import fmt
from caliper.report.fmt import when_label
from caliper.results.interval import Interval


def render_specs(rows: list[dict], root: Path, console: Console) -> None:
    """Each spec with its number of runs and latest run id."""
    if not rows:
        console.print(Text(f"No saved runs under {root / 'results'}."))
        return
    table = Table(title=f"Saved runs in {root}", title_justify="left")
    table.add_column("Spec")
    table.add_column("Runs", justify="right")
    table.add_column("Latest run", no_wrap=True)
    for row in rows:
        table.add_row(escape(row["spec"]), str(row["runs"]), escape(row["latest_run_id"]))
    console.print(table)


def render_runs(spec_name: str, rows: list[dict], console: Console) -> None:
    """One spec's runs, newest first."""
    table = Table(title=f"Runs of {spec_name} (newest first)", title_justify="left")
    table.add_column("Run id", no_wrap=True)
    table.add_column("Time", no_wrap=True)
    table.add_column("Engine", overflow="fold")
    table.add_column("k", justify="right", no_wrap=True)
    table.add_column("Score [95% interval]", justify="right", no_wrap=True)
    table.add_column("Ablated", overflow="fold")
    table.add_column("Status", no_wrap=True)
    problems = []
    for row in rows:
        if "error" in row:
            table.add_row(escape(row["run_id"]), "[red]unreadable[/red]")
            problems.append(row["error"])
            continue
        table.add_row(
            escape(row["run_id"]),
            when_label(row["started_at"]),
            escape(row["engine"] or fmt.DASH),
            str(row["k"]),
            _score_cell(row),
            escape(", ".join(row["ablated"])) or fmt.DASH,
            _state(row),
        )
    console.print(table)
    for line in pair_lines(rows):
        console.print(Text(line), soft_wrap=True)
    for problem in problems:
        console.print(Text(problem, style="red"), soft_wrap=True)


def pair_lines(rows: list[dict]) -> list[str]:
    """One line per baseline pair among ``rows``: its id, each arm's run, and the command that
    judges it again."""
    pairs: dict[tuple[str, str], dict[str, str]] = {}
    for row in rows:
        baseline = row.get("baseline")
        if baseline and "error" not in row:
            key = (str(baseline.get("id")), str(baseline.get("engine") or ""))
            pairs.setdefault(key, {})[str(baseline.get("arm"))] = row["run_id"]
    lines = []
    for (ident, engine), arms in pairs.items():
        on = f" on {engine}" if engine else ""
        runs = " → ".join(f"{arm} {arms[arm]}" for arm in ("control", "full") if arm in arms)
        lines.append(f"Baseline pair {ident}{on}: {runs} (`caliper compare --baseline {ident}`)")
    return lines


def _score_cell(row: dict) -> str:
    """``66.7% [20.8–93.9]``: the run's score with the interval ``caliper report`` shows."""
    bounds = row.get("score_interval")
    interval = Interval(**bounds) if isinstance(bounds, dict) else None
    return fmt.pct_interval(row["score"], interval)


def _state(row: dict) -> str:
    """``incomplete (N attempts)`` for a killed run, ``shard I/N`` for a shard run, ``partial``
    for one stopped early, then how a derived run was made (``regrade of RUN``, ``merged (N
    shards)``, ``resumed``)."""
    derived = f"[cyan]{escape(row['derived'])}[/cyan]" if row.get("derived") else ""
    if row.get("incomplete"):
        count = row.get("attempts", 0)
        state = f"[red]incomplete[/red] ({count} attempt{'s' if count != 1 else ''})"
    elif row.get("shard"):  # a shard run is partial by nature
        state = f"[yellow]shard {row['shard']}[/yellow]"
    elif row.get("merged_shards") and not derived:
        state = f"merged ({row['merged_shards']} shards)"
    else:
        state = "[yellow]partial[/yellow]" if row["partial"] else ""
    baseline = row.get("baseline")
    arm = f"[magenta]baseline {escape(str(baseline.get('arm')))}[/magenta]" if baseline else ""
    return ", ".join(part for part in (state, derived, arm) if part)
