"""Bars for CI: ``--min-score`` / ``--min-activation``, judged on confidence intervals.

A bar is a threshold set before the run, on the run's aggregate (``--min-score 0.8``) or on
one task (``--min-score "TASK=0.9"``). It is judged on the rate's confidence interval, never
on the bare point estimate, so that a handful of attempts cannot pass or fail a gate by luck:

* **met** when the interval's lower bound is at or above the bar;
* **failed** when the interval's upper bound is below the bar;
* **inconclusive** otherwise: the attempts cannot tell which side of the bar the true rate is
  on (more attempts, a larger ``--k``, narrow the interval). ``--inconclusive pass|fail``
  (default ``fail``) says how such a bar counts;
* **unmeasured** when there was nothing to measure (no usable attempt): it always fails.

A run made with ``--k auto`` stopped each task when its data looked decided, and a fixed-k
interval (Wilson) does not keep its error rate after that kind of optional stopping. Such a
run is judged with the anytime-valid tools the run itself used
(:mod:`caliper.results.sequential`, :func:`measure_sequential`): a task's bar is met or
failed when the one-sided mixture sequential test crossed its threshold at some point of the
task's usable attempts (after ``--min-k``; the decision that stopped the task), else
inconclusive; the interval shown is the confidence sequence. A bar on the run's aggregate is
judged on the mean of the tasks' confidence sequences, each at level ``1 − α/T`` (a union
bound over the T tasks), which holds the mean of the tasks' true rates with ``1 − α``.

Pure functions, no I/O; ``docs/ci.md`` explains the gate in plain words.
"""

from __future__ import annotations

import difflib
import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from caliper.results.scoring import RunScore
from caliper.results.stats import Interval

if TYPE_CHECKING:
    from caliper.results.models import RunResults

SCORE = "score"
ACTIVATION = "activation"
METRIC_FLAGS = {SCORE: "--min-score", ACTIVATION: "--min-activation"}
METRIC_WORDS = {SCORE: "success", ACTIVATION: "activation"}


class BarVerdict(str, enum.Enum):
    """Which case a bar is in (see the module docstring)."""

    MET = "met"
    FAILED = "failed"
    INCONCLUSIVE = "inconclusive"
    UNMEASURED = "unmeasured"


class InconclusivePolicy(str, enum.Enum):
    """How an inconclusive bar counts: ``--inconclusive pass|fail``."""

    PASS = "pass"
    FAIL = "fail"


DEFAULT_POLICY = InconclusivePolicy.FAIL


class BarSyntaxError(ValueError):
    """A bar flag's value cannot be read (the message says what was expected)."""


@attrs.frozen
class Bar:
    """One threshold: ``metric`` (``"score"`` or ``"activation"``) must reach ``threshold``
    (a fraction in ``[0, 1]``), on task ``task`` or on the run's aggregate when ``None``."""

    metric: str
    threshold: float
    task: str | None = None

    @property
    def flag(self) -> str:
        """The flag that sets this bar (``--min-score`` or ``--min-activation``)."""
        return METRIC_FLAGS[self.metric]

    @property
    def label(self) -> str:
        """``success of task 'X' ≥ 90%`` / ``run success ≥ 80%``."""
        word = METRIC_WORDS[self.metric]
        what = f"{word} of task {self.task!r}" if self.task is not None else f"run {word}"
        return f"{what} ≥ {format_fraction(self.threshold)}"

    @property
    def source(self) -> str:
        """The flag as it would be written: ``--min-score 'TASK=0.9'``."""
        value = format_number(self.threshold)
        return f"{self.flag} {value}" if self.task is None else f"{self.flag} {self.task}={value}"


def format_fraction(value: float) -> str:
    """``0.9`` → ``90%``, ``0.875`` → ``87.5%``."""
    text = f"{value * 100:.1f}".rstrip("0").rstrip(".")
    return f"{text}%"


def format_number(value: float) -> str:
    """``0.9`` → ``0.9``, ``1.0`` → ``1``."""
    return f"{value:g}"


def _threshold(text: str, where: str) -> float:
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100.0 if raw.endswith("%") else float(raw)
    except ValueError:
        raise BarSyntaxError(
            f"{where}: {text!r} is not a number; give a fraction such as 0.8 or a percentage "
            "such as 80%"
        ) from None
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise BarSyntaxError(f"{where}: {text!r} must lie between 0 and 1 (or 0% and 100%)")
    return value


def parse_bar(text: str, metric: str) -> Bar:
    """Read one ``--min-score``/``--min-activation`` value: ``0.8``, ``80%`` or ``TASK=0.9``.

    A value that is a number on its own is a bar on the run's aggregate. Otherwise the text is
    split at its **last** ``=``: the left part is the task name (which may itself contain
    spaces and ``=``), the right part the number.
    """
    flag = METRIC_FLAGS[metric]
    try:
        return Bar(metric, _threshold(text, flag), None)
    except BarSyntaxError:
        if "=" not in text:
            raise
    name, _, number = text.rpartition("=")
    if not name.strip():
        raise BarSyntaxError(f"{flag} {text!r}: the task name before '=' is empty")
    return Bar(metric, _threshold(number, f"{flag} {text!r}"), name)


def check_bar_tasks(
    bars: Iterable[Bar], task_names: Sequence[str], activation_tasks: Iterable[str]
) -> None:
    """Every per-task bar must name a task of the spec (a did-you-mean otherwise); an
    activation bar needs a task (or, for the aggregate, any task) with ``activates:``.

    Raises :class:`BarSyntaxError` with the message to show.
    """
    with_activation = set(activation_tasks)
    for bar in bars:
        if bar.task is None:
            if bar.metric == ACTIVATION and not with_activation:
                raise BarSyntaxError(
                    f"{bar.source}: no task of the spec has an activates: check, so there is "
                    "no activation rate to gate on"
                )
            continue
        if bar.task not in task_names:
            close = difflib.get_close_matches(bar.task, list(task_names), n=1, cutoff=0.6)
            suggestion = f" Did you mean {close[0]!r}?" if close else ""
            shown = ", ".join(repr(n) for n in task_names) or "none"
            raise BarSyntaxError(
                f"{bar.flag}: the spec has no task named {bar.task!r}.{suggestion} Tasks: {shown}."
            )
        if bar.metric == ACTIVATION and bar.task not in with_activation:
            raise BarSyntaxError(
                f"{bar.flag}: task {bar.task!r} has no activates: check, so it has no "
                "activation rate to gate on"
            )


def judge_bar(threshold: float, interval: Interval | None) -> BarVerdict:
    """The case a bar is in, given the rate's interval (``None``: nothing was measured)."""
    if interval is None:
        return BarVerdict.UNMEASURED
    if interval.low >= threshold:
        return BarVerdict.MET
    if interval.high < threshold:
        return BarVerdict.FAILED
    return BarVerdict.INCONCLUSIVE


def sequential_verdict(
    threshold: float, sequence: Sequence[bool], confidence: float, min_n: int = 1
) -> BarVerdict:
    """A bar judged by the one-sided mixture sequential tests over ``sequence`` (usable
    outcomes in order): met or failed at the first ``n >= min_n`` where a test crosses
    ``1/α`` (where ``--k auto`` stopped the task), inconclusive when neither ever did,
    unmeasured for no outcome. Valid however the number of outcomes was chosen: the chance
    that a test *ever* crosses is at most ``α`` (Ville's inequality)."""
    from caliper.results.sequential import bar_decision

    if not sequence:
        return BarVerdict.UNMEASURED
    successes = 0
    for n, passed in enumerate(sequence, start=1):
        successes += bool(passed)
        if n < min_n:
            continue
        decision = bar_decision(successes, n, threshold, confidence)
        if decision is not None:
            return BarVerdict(decision)
    return BarVerdict.INCONCLUSIVE


def judge_measured(threshold: float, measured: Measured, confidence: float) -> BarVerdict:
    """The case a bar on ``measured`` is in: by the sequential test when the rate carries
    its outcome sequence (``--k auto``), else by its interval (:func:`judge_bar`)."""
    if measured.sequence is not None and measured.interval is not None:
        return sequential_verdict(threshold, measured.sequence, confidence, measured.min_n)
    return judge_bar(threshold, measured.interval)


def counts_as_pass(verdict: BarVerdict, policy: InconclusivePolicy) -> bool:
    """Whether a bar in case ``verdict`` lets the gate pass under ``policy``."""
    if verdict is BarVerdict.MET:
        return True
    if verdict is BarVerdict.INCONCLUSIVE:
        return policy is InconclusivePolicy.PASS
    return False


BY_INTERVAL = "interval"
"""``judged_by`` of a bar decided by where its interval lies (fixed k)."""
BY_SEQUENTIAL = "sequential-test"
"""``judged_by`` of a bar decided by the mixture sequential test (``--k auto``)."""

METHOD_LABELS = {
    "wilson": "Wilson interval (fixed k)",
    "task-mean": "task-mean interval (fixed k)",
    "confidence-sequence": "sequential test (anytime-valid, --k auto)",
    "confidence-sequence-mean": "mean of anytime-valid confidence sequences (--k auto)",
}
"""How each interval method is named where a bar says what judged it."""


@attrs.frozen
class Measured:
    """A rate as a bar sees it: the point estimate, its interval and what it rests on.

    ``successes``/``trials`` are set for a single task's rate (``None`` for an aggregate).
    ``sequence`` (a ``--k auto`` task's usable outcomes, in attempt order) makes the bar be
    decided by the sequential test from the ``min_n``-th outcome on, not by the interval.
    """

    value: float | None
    interval: Interval | None
    successes: int | None = None
    trials: int | None = None
    sequence: tuple[bool, ...] | None = None
    min_n: int = 1

    @property
    def judged_by(self) -> str:
        """:data:`BY_SEQUENTIAL` or :data:`BY_INTERVAL`."""
        return BY_SEQUENTIAL if self.sequence is not None else BY_INTERVAL

    @property
    def anytime_valid(self) -> bool:
        """Whether this rate is judged with the ``--k auto`` tools (sequential test or
        confidence sequences), not a fixed-k interval."""
        method = self.interval.method if self.interval is not None else ""
        return self.sequence is not None or method.startswith("confidence-sequence")

    @property
    def method_label(self) -> str:
        """In words, what judges a bar on this rate (``Wilson interval (fixed k)``, …)."""
        method = self.interval.method if self.interval is not None else None
        return METHOD_LABELS.get(method or "", method or "nothing measured")


@attrs.frozen
class BarResult:
    """One bar, the rate it was judged on, and its verdict under the gate's policy."""

    bar: Bar
    measured: Measured
    verdict: BarVerdict
    passed: bool

    @property
    def reason(self) -> str:
        """One sentence: what the interval says about the bar."""
        interval = self.measured.interval
        bar = format_fraction(self.bar.threshold)
        if interval is None:
            return f"nothing was measured (no usable attempt), so the {bar} bar cannot be met"
        shown = f"[{format_fraction(interval.low)}–{format_fraction(interval.high)}]"
        if self.measured.judged_by == BY_SEQUENTIAL:
            return self._sequential_reason(bar, shown)
        if self.verdict is BarVerdict.MET:
            return f"the interval {shown} lies at or above {bar}"
        if self.verdict is BarVerdict.FAILED:
            return f"the interval {shown} lies below {bar}"
        return (
            f"the interval {shown} straddles {bar}: too few attempts to tell (more attempts "
            "narrow it)"
        )

    def _sequential_reason(self, bar: str, shown: str) -> str:
        trials = self.measured.trials
        if self.verdict in (BarVerdict.MET, BarVerdict.FAILED):
            side = "above" if self.verdict is BarVerdict.MET else "below"
            return (
                f"the sequential test shows the rate {side} {bar} (anytime-valid; "
                f"{self.measured.successes}/{trials} usable attempts, interval {shown})"
            )
        return (
            f"the sequential test could not tell whether the rate is above or below {bar} in "
            f"{trials} usable attempts (anytime-valid interval {shown}; a larger --max-k "
            "gives it more)"
        )

    def to_json(self) -> dict[str, object]:
        """Plain data for ``--format json``."""
        interval = self.measured.interval
        return {
            "metric": self.bar.metric,
            "task": self.bar.task,
            "threshold": self.bar.threshold,
            "value": self.measured.value,
            "interval": attrs.asdict(interval) if interval is not None else None,
            "successes": self.measured.successes,
            "trials": self.measured.trials,
            "judged_by": self.measured.judged_by,
            "method": self.measured.method_label,
            "verdict": self.verdict.value,
            "passed": self.passed,
            "reason": self.reason,
        }


@attrs.frozen
class GateResult:
    """Every bar's result; the gate passes when each bar counts as a pass under ``policy``."""

    bars: list[BarResult]
    policy: InconclusivePolicy
    confidence: float

    @property
    def passed(self) -> bool:
        """True when no bar failed (or was inconclusive under the ``fail`` policy)."""
        return all(result.passed for result in self.bars)

    @property
    def heading(self) -> str:
        """``95% intervals`` (fixed k), or what judged a ``--k auto`` run's bars."""
        level = format_fraction(self.confidence)
        if any(result.measured.anytime_valid for result in self.bars):
            return f"{level} anytime-valid: sequential tests and confidence sequences, --k auto"
        return f"{level} intervals"

    @property
    def failures(self) -> list[BarResult]:
        """The bars that stop the gate."""
        return [result for result in self.bars if not result.passed]

    def to_json(self) -> dict[str, object]:
        """The ``gate`` block of ``--format json``."""
        return {
            "passed": self.passed,
            "confidence": self.confidence,
            "inconclusive": self.policy.value,
            "bars": [result.to_json() for result in self.bars],
        }


def evaluate_gate(
    bars: Sequence[Bar],
    measure: Mapping[tuple[str, str | None], Measured],
    *,
    policy: InconclusivePolicy = DEFAULT_POLICY,
    confidence: float,
) -> GateResult:
    """Judge every bar on its rate: ``measure[(metric, task or None)]``.

    A bar whose rate is missing from ``measure`` (a task that was never run) is unmeasured.
    """
    results = []
    for bar in bars:
        measured = measure.get((bar.metric, bar.task), Measured(None, None))
        verdict = judge_measured(bar.threshold, measured, confidence)
        results.append(BarResult(bar, measured, verdict, counts_as_pass(verdict, policy)))
    return GateResult(results, policy, confidence)


def _gate_mean_interval(counts: list[tuple[int, int]], level: float) -> Interval | None:
    """The run-aggregate interval bars are judged on: the task-mean interval, or for one
    measured task its Wilson interval."""
    from caliper.results.stats import mean_rate_interval, wilson_interval

    kept = [(s, n) for s, n in counts if n > 0]
    if len(kept) == 1:
        return wilson_interval(kept[0][0], kept[0][1], level)
    return mean_rate_interval(kept, level)


def measure_run(run: RunScore) -> dict[tuple[str, str | None], Measured]:
    """Every rate a bar can be set on, from a run scored at the gate's confidence: each
    task's success and activation rate (Wilson intervals, computed here from the counts: the
    intervals reports print are another method) and the run's aggregate of each (the
    task-mean interval; see ``docs/statistics.md``)."""
    from caliper.results.stats import wilson_interval

    level = run.confidence
    measure: dict[tuple[str, str | None], Measured] = {}
    for task in run.tasks:
        measure[(SCORE, task.name)] = Measured(
            task.score,
            wilson_interval(task.successes, task.usable, level),
            task.successes,
            task.usable,
        )
        if task.activation_expected is not None:
            measure[(ACTIVATION, task.name)] = Measured(
                task.activation_score,
                wilson_interval(task.activation_successes, task.activation_usable, level),
                task.activation_successes,
                task.activation_usable,
            )
    scored = [(t.successes, t.usable) for t in run.tasks]
    acts = [(t.activation_successes, t.activation_usable) for t in run.tasks]
    measure[(SCORE, None)] = Measured(run.score, _gate_mean_interval(scored, level))
    measure[(ACTIVATION, None)] = Measured(
        run.avg_activation_score,
        _gate_mean_interval(
            [c for c, t in zip(acts, run.tasks, strict=True) if t.activation_score is not None],
            level,
        ),
    )
    return measure


def _sequence_interval(successes: int, trials: int, confidence: float) -> Interval | None:
    """The confidence sequence after ``successes`` in ``trials``, as an :class:`Interval`."""
    from caliper.results.sequential import confidence_sequence

    if trials <= 0:
        return None
    found = confidence_sequence(successes, trials, confidence)
    return Interval(found.low, found.high, confidence, "confidence-sequence")


def _sequence_measured(outcomes: list[bool], confidence: float, min_n: int) -> Measured:
    successes, trials = sum(outcomes), len(outcomes)
    return Measured(
        successes / trials if trials else None,
        _sequence_interval(successes, trials, confidence),
        successes,
        trials,
        tuple(outcomes),
        min_n,
    )


def _mean_of_sequences(counts: list[tuple[int, int]], confidence: float) -> Measured:
    """The aggregate of several tasks: the mean rate, and the mean of the tasks' confidence
    sequences at level ``1 − α/T`` (if each holds its task's rate, as all do together with
    chance ``1 − α``, the mean of the ends holds the mean rate)."""
    from caliper.results.sequential import confidence_sequence

    kept = [(s, n) for s, n in counts if n > 0]
    if not kept:
        return Measured(None, None)
    level = 1.0 - (1.0 - confidence) / len(kept)
    ends = [confidence_sequence(s, n, level) for s, n in kept]
    low = math.fsum(e.low for e in ends) / len(kept)
    high = math.fsum(e.high for e in ends) / len(kept)
    value = math.fsum(s / n for s, n in kept) / len(kept)
    return Measured(value, Interval(low, high, confidence, "confidence-sequence-mean"))


def measure_sequential(
    results: RunResults, confidence: float, min_k: int = 1
) -> dict[tuple[str, str | None], Measured]:
    """Every rate a bar can be set on, for a run made with ``--k auto``: each task's success
    and activation outcomes in attempt order (judged by the sequential test from the
    ``min_k``-th usable one on, shown with the confidence sequence) and the run's aggregate
    of each (the mean of confidence sequences; see the module docstring)."""
    from caliper.results.models import Outcome

    measure: dict[tuple[str, str | None], Measured] = {}
    score_counts, activation_counts = [], []
    for task in results.tasks:
        attempts = sorted(task.attempts, key=lambda record: record.attempt)
        passes = [a.outcome is Outcome.PASS for a in attempts if a.outcome.usable]
        measure[(SCORE, task.name)] = _sequence_measured(passes, confidence, min_k)
        score_counts.append((sum(passes), len(passes)))
        if task.activation_expected is not None:
            loaded = [a.activation_passed for a in attempts if a.activation_passed is not None]
            measure[(ACTIVATION, task.name)] = _sequence_measured(loaded, confidence, min_k)
            activation_counts.append((sum(loaded), len(loaded)))
    measure[(SCORE, None)] = _mean_of_sequences(score_counts, confidence)
    measure[(ACTIVATION, None)] = _mean_of_sequences(activation_counts, confidence)
    return measure


def gate_from_data(data: object) -> GateResult | None:
    """A gate read back from its stored form (``meta.gate``, :meth:`GateResult.to_json`),
    to show what a run was held to; ``None`` when ``data`` is missing or not that shape.

    A bar that was judged by the sequential test keeps an empty ``sequence`` (the outcomes
    are in the run itself), so it still says what judged it.
    """
    if not isinstance(data, dict) or not isinstance(data.get("bars"), list):
        return None
    try:
        results = []
        for item in data["bars"]:
            interval = item.get("interval")
            measured = Measured(
                item.get("value"),
                Interval(**interval) if isinstance(interval, dict) else None,
                item.get("successes"),
                item.get("trials"),
                () if item.get("judged_by") == BY_SEQUENTIAL else None,
            )
            if item["metric"] not in METRIC_FLAGS:
                raise ValueError(f"unknown metric {item['metric']!r}")
            bar = Bar(item["metric"], float(item["threshold"]), item.get("task"))
            verdict = BarVerdict(item["verdict"])
            results.append(BarResult(bar, measured, verdict, bool(item["passed"])))
        return GateResult(
            results, InconclusivePolicy(data["inconclusive"]), float(data["confidence"])
        )
    except (KeyError, TypeError, ValueError):
        return None
