"""``caliper report``: show a saved run again, as text, as JSON with derived scores, or as
Markdown for CI pages; bars given here are judged on the saved run."""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import TYPE_CHECKING

import click

from caliper.commands.confidence import DEFAULT_CONFIDENCE, confidence_option
from caliper.commands.gate_options import bar_options, check_bars, evaluate, raise_if_failed
from caliper.commands.output_options import (
    FORMATS,
    TABLE_FORMATS,
    format_option,
    matrix_option,
    output_file_option,
    verbose_option,
)
from caliper.errors import UsageError

SAVED_GATE_TITLE = "Bars this run was held to (as judged when it ran)"

if TYPE_CHECKING:
    from caliper.results.gate import Bar, GateResult
    from caliper.results.models import RunResults


def report_data(results, path: Path, confidence: float = DEFAULT_CONFIDENCE) -> dict:
    """The JSON of ``caliper report --format json``: the saved run plus derived blocks
    (intervals at ``confidence``); its attempts are records, written by
    :func:`caliper.results.codec.json_pieces`."""
    from caliper.results import codec
    from caliper.results.run_clock import clock_data, run_clock
    from caliper.results.scoring import score_run, scores_data, usage_data
    from caliper.results.spend import spend_data

    run = score_run(results, confidence)
    data = codec.to_data_by_attempt(results)  # each attempt's data made as it is written
    data["path"] = str(path)
    data["scores"] = scores_data(run)
    data["usage_totals"] = usage_data(run)
    data["wall_clock"] = clock_data(run_clock(results.meta))
    data["spend"] = spend_data(results, confidence)
    from caliper.report.tool_usage_view import run_tool_usage

    data["tool_usage"] = run_tool_usage(results).data()
    return data


@click.command(name="report")
@click.argument("refs", nargs=-1, metavar="[REF]...")
@matrix_option(
    "Show the runs of a matrix (`caliper run SPEC --model A --model B`) side by side: "
    "each engine's rate per task with its interval, and which differences are significant. "
    "Several REFs show those runs side by side the same way. With --format html: one page "
    "whose cells open their attempts, with each task's final answers side by side across "
    "engines."
)
@format_option(
    "text: the same report `caliper run` prints; json: the saved run plus derived "
    "`scores`, `usage_totals`, `spend` (cost and agent time) and `tool_usage` (MCP calls) "
    "blocks (and `gate` with bars); markdown: a summary table for $GITHUB_STEP_SUMMARY; "
    "html: one self-contained page with a transcript viewer (to stdout, or to -o FILE); "
    "csv / jsonl: the attempt table, one row per attempt (task, attempt, outcome, kind, "
    "verdict, duration, tokens, skills, final answer).",
    (*FORMATS, *TABLE_FORMATS),
)
@output_file_option("With --format html, csv or jsonl: write to FILE instead of stdout.")
@verbose_option("Add pass@k / pass^k and a panel per task.")
@confidence_option
@bar_options
def command(
    refs: tuple[str, ...],
    matrix_id: str | None,
    output_format: str,
    verbose: bool,
    confidence: float,
    output: Path | None,
    min_score: tuple[Bar, ...],
    min_activation: tuple[Bar, ...],
    max_cost_per_attempt: tuple[Bar, ...],
    max_duration: tuple[Bar, ...],
    inconclusive: str,
) -> None:
    """Show a saved run again.

    REF is a results JSON file, a spec file (its latest run) or a spec name (its latest run
    under the nearest .caliper/ folder). Without REF, the most recent run of any spec.
    With --format html, a spec name or spec file gives the page over all of the spec's runs
    (the `caliper history --format html` page: pick a run to see its tasks, each task's score
    over runs); a run id or results file gives that run's page.
    A run made with bars also shows the bars it was held to and their verdicts then (saved
    with it); bars given here judge it again and decide the exit code.

    \b
    Examples:
      caliper report                          # the most recent run
      caliper report my-skill                 # my-skill's latest run
      caliper report .caliper/results/my-skill/2026-11-30T18-01-33Z.json -v
      caliper report my-skill --format json | jq .scores
      caliper report my-skill --min-score 0.8   # judge bars on a saved run
      caliper report my-skill --format markdown >> "$GITHUB_STEP_SUMMARY"
      caliper report my-skill --format html -o my-skill.html   # all its runs
      caliper report my-skill/2026-11-30T18-01-33Z --format html -o run.html
      caliper report my-skill --format csv -o attempts.csv   # or jsonl
      caliper report --matrix 2026-12-01T10-00-00Z-1a2b3c   # engines side by side
      caliper report RUN-A.json RUN-B.json --format markdown
      caliper report --matrix 2026-12-01T10-00-00Z-1a2b3c --format html -o matrix.html

    \b
    Exit codes:
      0  the report was shown
      2  REF matches no saved run, the file is not a readable results file, or
         -o FILE cannot be written; --matrix ID matches no run; runs of
         different specs given side by side; bars, or -o without --format
         html, with a matrix
      3  a --min-score/--min-activation/--max-cost-per-attempt/--max-duration bar
         was not met (see `caliper run --help`)
    """
    from caliper.results.store import load_run

    if matrix_id is not None or len(refs) > 1:  # engines side by side
        from caliper.commands.matrix_report import show_matrix

        if output_format in TABLE_FORMATS:
            raise UsageError(
                f"--format {output_format} is the attempt table of one run.",
                hint="Give one REF, without --matrix.",
            )
        bars_given = (*min_score, *min_activation, *max_cost_per_attempt, *max_duration)
        if bars_given:
            raise UsageError(
                "Bars apply to one run, not to a matrix.",
                hint="Report one engine's run to judge bars on it.",
            )
        if output is not None and output_format != "html":
            raise UsageError(
                "-o/--output is for --format html with a matrix.", hint="Add --format html."
            )
        show_matrix(matrix_id, refs, output_format, confidence, output)
        return
    cwd = Path.cwd()
    if output_format == "html" and refs:
        from caliper.commands.history import report_spec_page

        if report_spec_page(refs[0], output, confidence):  # a spec: the page over its runs
            return
    path = _run_path(refs[0] if refs else None, cwd)
    if output is not None and output_format not in ("html", *TABLE_FORMATS):
        raise UsageError(
            "-o/--output is for --format html, csv or jsonl.", hint="Add --format html."
        )
    # text and markdown never show a turn: read a summary; json and html hold the whole run
    from caliper.results.codec import kept_until_exit

    with kept_until_exit():
        results = load_run(path, transcripts=_needs_turns(path, output_format))
    if output_format == "html":
        from caliper.report.html.output import emit_page, run_html

        emit_page(run_html(results, path, confidence), output)
        return
    if output_format in TABLE_FORMATS:
        from caliper.report import attempt_table
        from caliper.report.html.output import emit_page

        rows = attempt_table.attempt_rows(results)
        write = attempt_table.to_csv if output_format == "csv" else attempt_table.to_jsonl
        emit_page(write(rows), output)
        return
    bars = (*min_score, *min_activation, *max_cost_per_attempt, *max_duration)
    gate = _gate(results, bars, inconclusive, confidence)
    if output_format == "json":
        _print_json(results, path, confidence, gate)
    elif output_format == "markdown":
        _print_markdown(results, confidence, gate)
    else:
        _print_text(results, _shown_path(path, cwd), verbose, confidence, gate)

    raise_if_failed(gate)


def _run_path(ref: str | None, cwd: Path) -> Path:
    """The results file REF names; without REF, the most recent run of any spec."""
    from caliper.results.store import ResultsError, caliper_root, latest_run, resolve_run_ref

    if ref is not None:
        return resolve_run_ref(ref, cwd=cwd)
    root = caliper_root(cwd, None)
    entry = latest_run(root)
    if entry is None:
        raise ResultsError(
            f"There are no saved runs under {root / 'results'}.",
            hint="Run `caliper run SPEC` first.",
        )
    return entry.path


def _print_json(
    results: RunResults, path: Path, confidence: float, gate: GateResult | None
) -> None:
    """``--format json``: :func:`report_data` (with ``gate`` when bars were given), written
    piece by piece."""
    from caliper.results.codec import json_pieces

    data = report_data(results, path, confidence)
    if gate is not None:
        data["gate"] = gate.to_json()
    for piece in json_pieces(data):  # never the whole text at once
        click.echo(piece, nl=False)
    click.echo()


def _print_markdown(results: RunResults, confidence: float, gate: GateResult | None) -> None:
    """``--format markdown``: the summary, with the bars given here or else those the run was
    held to."""
    from caliper.report.markdown import run_markdown

    shown, title = gate, "Bars"
    if gate is None and results.meta.gate is not None:  # what `caliper run` held it to
        from caliper.results.gate import gate_from_data

        shown, title = gate_from_data(results.meta.gate), SAVED_GATE_TITLE
    text = run_markdown(results, confidence=confidence, gate=shown, gate_title=title)
    click.echo(text, nl=False)


def _print_text(
    results: RunResults, shown: Path, verbose: bool, confidence: float, gate: GateResult | None
) -> None:
    """``--format text``: the report ``caliper run`` prints, then the bars (given here, or
    else those the run was held to)."""
    from caliper.report import make_console
    from caliper.report.run_view import render_run

    console = make_console()
    render_run(
        results,
        console,
        verbose=verbose,
        path=shown,
        confidence=confidence,
        saved=False,  # a saved run is read, not saved again
    )
    if gate is not None:
        from caliper.report.gate_view import render_gate

        render_gate(gate, console)
    elif results.meta.gate is not None:  # what `caliper run` held this run to
        from caliper.report.gate_view import render_saved_gate

        render_saved_gate(results.meta.gate, console, SAVED_GATE_TITLE)


def _gate(
    results: RunResults, bars: tuple[Bar, ...], inconclusive: str, confidence: float
) -> GateResult | None:
    """Judge bars given on the command line on a saved run (``None`` without bars)."""
    if not bars:
        return None

    names = [task.name for task in results.tasks]
    activation = [task.name for task in results.tasks if task.activation_expected is not None]
    check_bars(bars, names, activation)
    return evaluate(results, bars, inconclusive, confidence)


def _shown_path(path: Path, cwd: Path) -> Path:
    try:
        return path.resolve().relative_to(cwd.resolve())
    except ValueError:
        return path


def _needs_turns(path: Path, output_format: str) -> bool:
    """Whether to decode the transcripts: json and html show them; text and markdown only
    count MCP calls from them, so they decode them only when the file names an ``mcp`` tool
    at all (every backend's MCP names hold it) or lists servers left out by ``--ablate``,
    keeping a big run's summary read cheap. Every run's meta holds the key
    ``"ablated_mcp"``; written empty (``"ablated_mcp": []``), that one does not count."""
    if output_format in ("json", "html"):
        return True
    return _names_mcp(path)


EMPTY_ABLATED_MCP = b'"ablated_mcp": []'


def _names_mcp(path: Path) -> bool:
    """Whether the file holds ``mcp`` anywhere but in ``"ablated_mcp": []`` (unreadable or
    empty: no), found through a memory map of it, never copying it."""
    before = EMPTY_ABLATED_MCP.index(b"mcp")
    try:
        with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as m:
            at = m.find(b"mcp")
            while at >= 0:
                start = at - before
                if start < 0 or m[start : start + len(EMPTY_ABLATED_MCP)] != EMPTY_ABLATED_MCP:
                    return True
                at = m.find(b"mcp", at + 3)
    except (OSError, ValueError):  # ValueError: an empty file cannot be mapped
        return False
    return False
