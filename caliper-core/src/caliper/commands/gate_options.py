"""The CI-gate flags shared by ``caliper run`` and ``caliper report``.

``--min-score`` / ``--min-activation`` (repeatable) set bars, ``--inconclusive pass|fail`` the
policy for bars the attempts cannot decide; :func:`apply_gate` judges them on a saved run,
prints which case each bar is in, and :func:`raise_if_failed` turns a failed gate into exit 3.
The logic lives in :mod:`caliper.results.gate`; this module is only the command-line side.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from caliper.errors import CaliperError, UsageError

if TYPE_CHECKING:
    from caliper.results.gate import Bar, GateResult
    from caliper.results.models import RunResults

EXIT_GATE_FAILED = 3

F = TypeVar("F", bound=Callable[..., Any])

BARS_HELP = """\b
Bars (a CI gate, judged on each rate's confidence interval):
  --min-score 0.8            the run's score must reach 80%
  --min-score "TASK=0.9"     task TASK's success rate must reach 90%
  --min-activation 0.9       the same for activation (also TASK=VALUE)
  A bar is MET when the interval's lower bound is at or above it, FAILED
  when the upper bound is below it, else INCONCLUSIVE (too few attempts
  to tell); --inconclusive pass|fail (default fail) says how that counts.
  A task's rate uses the exact Clopper-Pearson interval; with several bars
  "failed" is Bonferroni-adjusted so a job at its bars fails by a wrong
  "failed" at most 2.5% of the time. A --k auto run is judged by the
  sequential test it stopped with; a run-wide bar there is met when every
  task met it.
  --max-cost-per-attempt 0.25   mean reported USD per attempt at most $0.25
  --max-duration "TASK=90"      task TASK's mean agent time at most 90s
  A ceiling is MET when the Student-t interval of the mean lies at or
  below it, FAILED when it lies above it (Bonferroni-adjusted like the
  rates), else INCONCLUSIVE; one attempt is inconclusive, none unmeasured.
  Run-wide ceilings pool every counted attempt; cost counts the attempts
  whose CLI reported one (Claude Code does; no price table is applied).
  TASK=VALUE is split at the last '=', so task names may hold '=' and
  spaces. Rates are fractions (0.8) or percentages (80%); costs are USD
  (0.25 or $0.25); durations are seconds (90 or 90s).
"""


def _parse(metric: str) -> Callable[[click.Context, click.Parameter, tuple[str, ...]], tuple]:
    def callback(
        _ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]
    ) -> tuple[Bar, ...]:
        if not values:  # no bar given: the gate (and the scoring it imports) is not needed
            return ()
        from caliper.results.gate import BarSyntaxError, parse_bar

        try:
            return tuple(parse_bar(value, metric) for value in values)
        except BarSyntaxError as exc:
            raise click.BadParameter(str(exc)) from None

    return callback


def bar_options(function: F) -> F:
    """Add ``--min-score``, ``--min-activation``, ``--max-cost-per-attempt``,
    ``--max-duration`` and ``--inconclusive`` to a command."""
    options = [
        click.option(
            "--min-score",
            "min_score",
            multiple=True,
            metavar="[TASK=]RATE",
            callback=_parse("score"),
            help="A bar on the run's score, or on one task's success rate with TASK=RATE "
            "(repeatable). A failed bar exits 3. With --k auto, also what each task's "
            "attempts are decided against.",
        ),
        click.option(
            "--min-activation",
            "min_activation",
            multiple=True,
            metavar="[TASK=]RATE",
            callback=_parse("activation"),
            help="A bar on the run's activation rate, or on one task's (TASK=RATE; the task "
            "needs activates:). Repeatable. A failed bar exits 3.",
        ),
        click.option(
            "--max-cost-per-attempt",
            "max_cost_per_attempt",
            multiple=True,
            metavar="[TASK=]USD",
            callback=_parse("cost"),
            help="A ceiling on the mean reported cost per attempt in USD, run-wide or for one "
            "task with TASK=USD (repeatable), judged on the mean's Student-t interval. A "
            "failed bar exits 3.",
        ),
        click.option(
            "--max-duration",
            "max_duration",
            multiple=True,
            metavar="[TASK=]SECONDS",
            callback=_parse("duration"),
            help="A ceiling on the mean agent time per attempt in seconds, run-wide or for one "
            "task with TASK=SECONDS (repeatable), judged like --max-cost-per-attempt. A "
            "failed bar exits 3.",
        ),
        click.option(
            "--inconclusive",
            type=click.Choice(["pass", "fail"]),
            default="fail",
            show_default=True,
            help="How a bar counts when its interval straddles it (too few attempts to tell).",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def spec_task_names(
    spec: Path, activation_keys: Sequence[str] = ()
) -> tuple[list[str], list[str]] | None:
    """The task names of ``spec`` and those with an activation check (a key in
    ``activation_keys``), read from its YAML only (no skills); ``None`` when the file cannot
    be read as a spec (the run's own checks then report it)."""
    from caliper.spec.yamldoc import load_document

    try:
        document, _ = load_document(spec)
    except Exception:  # the spec loader reports every reading problem better
        return None
    data = document.data if document is not None else None
    tasks = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(tasks, list):
        return None
    names, activation = [], []
    for entry in tasks:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            names.append(entry["name"])
            if any(key in entry for key in activation_keys):
                activation.append(entry["name"])
    return names, activation


def check_bars(bars: Sequence[Bar], task_names: list[str], activation_tasks: list[str]) -> None:
    """A usage error (exit 2) when a bar names no task of the spec (with a did-you-mean)."""
    from caliper.results.gate import BarSyntaxError, check_bar_tasks

    try:
        check_bar_tasks(bars, task_names, activation_tasks)
    except BarSyntaxError as exc:
        raise UsageError(str(exc)) from None


def _has_activation_bar(bars: Sequence[Bar]) -> bool:
    from caliper.results.gate import ACTIVATION

    return any(bar.metric == ACTIVATION for bar in bars)


def _activation_keys() -> list[str]:
    """The task keys of installed judges that declare ``scores_activation``."""
    from caliper.host.plugins import PluginHost

    return [key for key, judge in PluginHost().judges().items() if judge.scores_activation]


def check_bars_before_run(spec: Path, bars: Sequence[Bar]) -> None:
    """Check the bars against the spec's tasks before any attempt runs."""
    if not bars:
        return
    found = spec_task_names(spec, _activation_keys() if _has_activation_bar(bars) else ())
    if found is not None:
        check_bars(bars, *found)


def evaluate(
    results: RunResults, bars: Sequence[Bar], inconclusive: str, confidence: float
) -> GateResult:
    """Judge ``bars`` on a run's results: a run made with ``--k auto`` (``meta.adaptive``)
    by the anytime-valid tools it stopped its tasks with, any other on fixed-k intervals."""
    from caliper.results.gate import (
        InconclusivePolicy,
        evaluate_gate,
        measure_run,
        measure_sequential,
    )

    adaptive = results.meta.adaptive
    if adaptive is not None:
        min_k = adaptive.get("min_k") if isinstance(adaptive, dict) else None
        min_k = min_k if isinstance(min_k, int) else 1
        measure = measure_sequential(results, confidence, min_k, _plan(adaptive, min_k))
    else:
        from caliper.results.scoring import score_run

        family = len(bars)
        wider = score_run(results, 1.0 - (1.0 - confidence) / family) if family > 1 else None
        measure = measure_run(score_run(results, confidence), wider)
    if any(bar.ceiling for bar in bars):
        from caliper.results.gate_spend import measure_spend

        measure = {**measure, **measure_spend(results, confidence, len(bars))}
    return evaluate_gate(
        bars, measure, policy=InconclusivePolicy(inconclusive), confidence=confidence
    )


def _plan(adaptive: object, min_k: int):
    """The boundaries a ``--k auto`` run stopped with (``None``: saved before ``--margin``)."""
    from caliper.results.gate import SequentialPlan

    if not isinstance(adaptive, dict):
        return None
    margin, max_k = adaptive.get("margin"), adaptive.get("max_k")
    if not isinstance(margin, (int, float)) or not isinstance(max_k, int) or margin <= 0:
        return None
    return SequentialPlan(float(margin), max_k, min_k)


def record_gate(path: Path | None, gate: GateResult, output: Path | None = None) -> None:
    """Save the bars and their verdicts in the run's results file at ``path`` (``meta.gate``)
    and in its ``--output`` copy when that is a file, so a later reader sees what the run was
    held to. A pipe or device copy was already written and is left as it is. A failure to
    write is a warning: the run itself is saved."""
    if path is None:
        return
    from caliper.results.store import ResultsWriteError, write_atomic, write_export, writes_directly

    try:
        text = with_gate(path.read_text(encoding="utf-8"), gate.to_json())
        write_atomic(path, text)
        if output is not None and not writes_directly(output):
            write_export(output, text)
    except (OSError, ValueError, KeyError, TypeError, ResultsWriteError) as exc:
        reason = exc.message if isinstance(exc, ResultsWriteError) else str(exc)
        click.echo(
            f"Warning: the bars could not be saved with the run in {path} ({reason}); the "
            "run itself is saved.",
            err=True,
        )


_META_START = '{\n  "meta": {\n'
_NO_GATE = '\n    "gate": null,\n'


def with_gate(text: str, gate: dict[str, Any]) -> str:
    """The text of a results file with ``meta.gate`` set to ``gate``: exactly what dumping
    the parsed file with that block would give. The file's ``"gate": null`` line is replaced
    in place when it is where the writer puts it (no parse of a big run's attempts); any
    other text is parsed and dumped whole."""
    import json

    from caliper.results import codec

    end = text.find('\n  "tasks": ')
    at = text.find(_NO_GATE, 0, end) if text.startswith(_META_START) and end > 0 else -1
    if at < 0:
        data = json.loads(text)
        data["meta"]["gate"] = gate
        return codec.dumps_data(data)
    block = codec.dumps_data(gate).rstrip("\n").replace("\n", "\n    ")
    return f'{text[:at]}\n    "gate": {block},\n{text[at + len(_NO_GATE) :]}'


def raise_if_failed(gate: GateResult | None) -> None:
    """Exit 3 with a message naming every bar that stopped the gate."""
    error = gate_error(gate)
    if error is not None:
        raise error


def gate_error(gate: GateResult | None) -> CaliperError | None:
    """The exit-3 error naming every bar that stopped the gate (``None``: it passed)."""
    if gate is None or gate.passed:
        return None
    from caliper.results.gate import BarVerdict

    failures = gate.failures
    listed = "; ".join(f"{r.bar.label}: {r.verdict.value}" for r in failures)
    return CaliperError(
        f"Gate failed: {len(failures)} of {len(gate.bars)} bar"
        f"{'s' if len(gate.bars) != 1 else ''} not met ({listed}).",
        hint=_advice(gate, [r for r in failures if r.verdict is BarVerdict.INCONCLUSIVE]),
        exit_code=EXIT_GATE_FAILED,
    )


def _advice(gate: GateResult, undecided: list) -> str | None:
    """What would decide the inconclusive bars, naming why each could not be decided."""
    if not undecided:
        return None
    split = [r for r in undecided if r.measured.parts is not None]
    if split and len(split) == len(undecided):
        return (
            "With --k auto a run-wide bar is met only when every task meets it and failed "
            f"only when every task fails it: {split[0].tally_words()}. Give the undecided "
            "tasks more attempts (--max-k), set per-task bars (TASK=RATE), or use "
            "--inconclusive pass."
        )
    return (
        f"An inconclusive bar needs more attempts ({_more_flag(gate)}) to decide, or "
        "--inconclusive pass."
    )


def _more_flag(gate: GateResult) -> str:
    """``--max-k`` for a ``--k auto`` run (its tasks stop by themselves), else ``--k``."""
    return "--max-k" if any(r.measured.anytime_valid for r in gate.bars) else "--k"


def junit_option(function: F) -> F:
    """Add ``--junit PATH`` (a JUnit XML report for CI) to a command."""
    return click.option(
        "--junit",
        "junit",
        type=click.Path(path_type=Path, dir_okay=False),
        metavar="PATH",
        help="Also write a JUnit XML report to PATH (one test case per task and per bar), "
        "for CI systems' test views. Written even when the gate fails.",
    )(function)


FAIL_ON = ("score", "activation", "both")
"""What ``--fail-on`` may name: a supported drop of the success score, of activation, or of
either."""


def fail_on_option(help_text: str) -> Callable[[F], F]:
    """Add ``--fail-on score|activation|both`` (default ``score``) with ``help_text``."""
    return click.option(
        "--fail-on",
        type=click.Choice(FAIL_ON),
        default="score",
        show_default=True,
        help=help_text,
    )


def lift_gate_options(require_help: str, min_lift_help: str) -> Callable[[F], F]:
    """Add the baseline's lift gate, ``--require-improvement`` and ``--min-lift D`` (a
    fraction in (-1, 1)), each with its command's own help."""

    def decorate(function: F) -> F:
        function = click.option(
            "--min-lift",
            type=click.FloatRange(min=-1, max=1, min_open=True, max_open=True),
            default=None,
            metavar="D",
            help=min_lift_help,
        )(function)
        return click.option("--require-improvement", is_flag=True, help=require_help)(function)

    return decorate


def check_junit_target(path: Path | None) -> None:
    """Fail before any attempt when ``--junit PATH`` obviously cannot be written."""
    if path is None:
        return

    from caliper.system.output_file import output_problem, writes_in_place

    if writes_in_place(path):
        return  # a device, FIFO or /dev/stdout: written in place, its folder need not be writable
    problem = output_problem(path)
    if problem is not None and not path.is_dir():
        raise UsageError(f"--junit {path}: {problem}; name a file such as junit.xml.")
    if path.is_dir():
        raise UsageError(f"--junit {path}: is a directory; name a file such as junit.xml.")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise UsageError(
            f"--junit {path}: the folder {folder} is not a writable folder.",
            hint="Pick a path in a folder you can write to.",
        )


def write_junit_report(path: Path | None, tree: Any) -> None:
    """Write a JUnit tree to ``path`` (nothing when ``None``); a failure exits 1 (74 when
    the disk is full)."""
    if path is None:
        return
    from caliper.report.junit import write_junit
    from caliper.system.output_file import OutputWriteError

    try:
        write_junit(path, tree)
    except OutputWriteError as exc:
        raise CaliperError(
            f"The JUnit report could not be written to {path}: {exc.reason}",
            hint=exc.hint,
            exit_code=exc.exit_code,
        ) from exc
    click.echo(f"JUnit report written to {path}", err=True)
