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

A task's rate is judged on the **Clopper–Pearson** interval (exact: each end misses with
chance at most ``α/2`` for every true rate). The gate's bars are one family: a bar is only
**failed** when the upper end at ``α/(2B)`` (Bonferroni over the ``B`` bars) lies below it,
so a job whose every rate is at its bar fails by a wrong "failed" with chance at most
``α/2`` overall; "met" needs no adjustment, since the job passes only when *every* bar is met.

A run made with ``--k auto`` stopped each task with the truncated sequential probability
ratio test of :func:`caliper.results.sequential.design` (a fixed-k interval would not keep its
error rate after that kind of optional stopping). Such a run is judged by the same test
(:func:`measure_sequential`): a task's bar is met or failed at the first point of its usable
attempts (after ``--min-k``) where the test crossed a boundary, else inconclusive. A bar on
the run's aggregate is met when *every* task met it and failed when every task failed it (an
intersection–union test: if the mean rate is at or below the bar, some task's rate is too,
and that task meets it wrongly with chance at most ``α``), else inconclusive. Runs saved
before the margin existed are judged by the one-sided mixture tests they stopped with.

Pure functions, no I/O; ``docs/ci.md`` explains the gate in plain words.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from caliper.results.measures import (
    ACTIVATION,
    COST,
    DURATION,
    SCORE,
    format_fraction,
    format_measure,
    format_number,
)
from caliper.results.models import Outcome
from caliper.results.scoring import RunScore
from caliper.results.stats import Interval, mean_rate_interval, wilson_interval
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.results.models import RunResults

METRIC_FLAGS = {
    SCORE: "--min-score",
    ACTIVATION: "--min-activation",
    COST: "--max-cost-per-attempt",
    DURATION: "--max-duration",
}
METRIC_WORDS = {
    SCORE: "success",
    ACTIVATION: "activation",
    COST: "cost per attempt",
    DURATION: "agent time per attempt",
}
CEILINGS = frozenset({COST, DURATION})
"""Metrics whose bar is a ceiling on a mean (cost in USD, agent time in seconds), judged on
the Student-t interval of the mean (:mod:`caliper.results.gate_spend`)."""


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


@attrs_classes.frozen
class Bar:
    """One threshold, on task ``task`` or on the run's aggregate when ``None``: a rate
    (``"score"``, ``"activation"``) must reach ``threshold`` (a fraction in ``[0, 1]``), or a
    mean per attempt (``"cost"`` in USD, ``"duration"`` in seconds) must stay at or below it."""

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
        sign = "≤" if self.ceiling else "≥"
        return f"{what} {sign} {format_measure(self.metric, self.threshold)}"

    @property
    def ceiling(self) -> bool:
        """Whether the bar is a ceiling on a mean (cost, time), not a floor on a rate."""
        return self.metric in CEILINGS

    @property
    def source(self) -> str:
        """The flag as it would be written: ``--min-score 'TASK=0.9'``."""
        value = format_number(self.threshold)
        return f"{self.flag} {value}" if self.task is None else f"{self.flag} {self.task}={value}"


def _ceiling(text: str, metric: str, where: str) -> float:
    """A cost (``0.5``, ``$0.5``) or a duration in seconds (``90``, ``90s``): finite, ≥ 0."""
    raw = text.strip()
    unit = "$" if metric == COST else "s"
    shown = raw[1:] if metric == COST and raw.startswith("$") else raw
    shown = shown[:-1] if metric == DURATION and shown.endswith("s") else shown
    example = "0.25 (USD)" if metric == COST else "90 (seconds)"
    try:
        value = float(shown)
    except ValueError:
        raise BarSyntaxError(
            f"{where}: {text!r} is not a number; give one such as {example}"
        ) from None
    if not math.isfinite(value) or value < 0:
        raise BarSyntaxError(f"{where}: {text!r} must be a number of {unit} at or above 0")
    return value


def _value(text: str, metric: str, where: str) -> float:
    if metric in CEILINGS:
        return _ceiling(text, metric, where)
    return _threshold(text, where)


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
    """Read one bar flag's value: ``0.8``, ``80%`` or ``TASK=0.9`` (``--min-score``,
    ``--min-activation``); ``0.25``, ``$0.25`` or ``TASK=0.25`` (``--max-cost-per-attempt``);
    ``90``, ``90s`` or ``TASK=90`` (``--max-duration``).

    A value that is a number on its own is a bar on the run's aggregate. Otherwise the text is
    split at its **last** ``=``: the left part is the task name (which may itself contain
    spaces and ``=``), the right part the number.
    """
    flag = METRIC_FLAGS[metric]
    try:
        return Bar(metric, _value(text, metric, flag), None)
    except BarSyntaxError:
        if "=" not in text:
            raise
    name, _, number = text.rpartition("=")
    if not name.strip():
        raise BarSyntaxError(f"{flag} {text!r}: the task name before '=' is empty")
    return Bar(metric, _value(number, metric, f"{flag} {text!r}"), name)


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
            import difflib

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


def designed_verdict(
    threshold: float,
    sequence: Sequence[bool],
    plan: SequentialPlan,
    confidence: float,
    family: int = 1,
) -> BarVerdict:
    """A bar judged by the truncated sequential probability ratio test ``--k auto`` stops
    with (:func:`caliper.results.sequential.design`): met or failed at the first usable
    outcome where the test crosses a boundary, inconclusive when it never did, unmeasured
    for no outcome. The failed side is shared among ``family`` bars (Bonferroni)."""
    if not sequence:
        return BarVerdict.UNMEASURED
    if threshold <= 0.0:
        return BarVerdict.MET
    from caliper.results.sequential import design

    alpha = 1.0 - confidence
    found = design(threshold, plan.margin, plan.max_n, plan.min_n, alpha, alpha / max(family, 1))
    successes = 0
    for n, passed in enumerate(sequence, start=1):
        successes += bool(passed)
        decision = found.decide(successes, n)
        if decision is not None:
            return BarVerdict(decision)
    return BarVerdict.INCONCLUSIVE


def exact_verdict(
    threshold: float, successes: int, trials: int, confidence: float, family: int = 1
) -> BarVerdict:
    """A bar on ``successes`` of ``trials`` judged by exact binomial tails (Clopper–Pearson):
    met when the lower ``α/2`` bound is at or above it, failed when the upper ``α/(2B)``
    bound (``B = family``, Bonferroni) is below it."""
    from caliper.results.exact_binomial import tail_at_least, tail_at_most

    if trials <= 0:
        return BarVerdict.UNMEASURED
    half = (1.0 - confidence) / 2.0
    if threshold <= 0.0 or (
        threshold < 1.0 and tail_at_least(successes, trials, threshold) <= half
    ):
        return BarVerdict.MET
    if tail_at_most(successes, trials, threshold) <= half / max(family, 1):
        return BarVerdict.FAILED
    return BarVerdict.INCONCLUSIVE


def judge_measured(
    threshold: float, measured: Measured, confidence: float, family: int = 1
) -> BarVerdict:
    """The case a bar on ``measured`` is in: by the sequential test when the rate carries
    its outcome sequence (``--k auto``), by every task's test for a ``--k auto`` aggregate,
    by exact tails for a task's fixed-k rate, else by its interval (:func:`judge_bar`, the
    failed side on ``measured.family_high`` when the family has more than one bar)."""
    if measured.ceiling:
        return ceiling_verdict(threshold, measured, family)
    if measured.interval is None:
        return BarVerdict.UNMEASURED
    if measured.parts is not None and measured.plan is not None:
        verdicts = [
            designed_verdict(threshold, part, measured.plan, confidence, family)
            for part in measured.parts
            if part
        ]
        return _every_task(verdicts)
    if measured.sequence is not None:
        if measured.plan is not None:
            return designed_verdict(threshold, measured.sequence, measured.plan, confidence, family)
        return sequential_verdict(threshold, measured.sequence, confidence, measured.min_n)
    if measured.exact and measured.successes is not None and measured.trials:
        return exact_verdict(threshold, measured.successes, measured.trials, confidence, family)
    verdict = judge_bar(threshold, measured.interval)
    if verdict is BarVerdict.FAILED and family > 1:
        high = measured.family_high.get(family)
        if high is None or high >= threshold:
            return BarVerdict.INCONCLUSIVE
    return verdict


def ceiling_verdict(threshold: float, measured: Measured, family: int = 1) -> BarVerdict:
    """A ceiling on a mean (cost, time): met when the mean's interval lies at or below it,
    failed when it lies above it (with several bars, also at the Bonferroni level
    ``1 − α/B``: ``measured.family_low``), else inconclusive; inconclusive too with one
    attempt (no spread to judge by), unmeasured with none."""
    if measured.value is None:
        return BarVerdict.UNMEASURED
    interval = measured.interval
    if interval is None:
        return BarVerdict.INCONCLUSIVE
    if interval.high <= threshold:
        return BarVerdict.MET
    if interval.low > threshold:
        if family > 1:
            low = measured.family_low.get(family)
            if low is None or low <= threshold:
                return BarVerdict.INCONCLUSIVE
        return BarVerdict.FAILED
    return BarVerdict.INCONCLUSIVE


def _every_task(verdicts: Sequence[BarVerdict]) -> BarVerdict:
    """An aggregate bar from its tasks' sequential verdicts: met when all met, failed when
    all failed, else inconclusive (unmeasured when no task was measured)."""
    if not verdicts:
        return BarVerdict.UNMEASURED
    if all(v is BarVerdict.MET for v in verdicts):
        return BarVerdict.MET
    if all(v is BarVerdict.FAILED for v in verdicts):
        return BarVerdict.FAILED
    return BarVerdict.INCONCLUSIVE


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
    "clopper-pearson": "exact Clopper–Pearson interval (fixed k)",
    "task-mean": "task-mean interval (fixed k)",
    "confidence-sequence": "sequential test (anytime-valid, --k auto)",
    "confidence-sequence-mean": "mean of anytime-valid confidence sequences (--k auto)",
    "every-task": "sequential test of every task (--k auto)",
    "student-t-mean": "Student-t interval of the mean",
}
"""How each interval method is named where a bar says what judged it."""


@attrs_classes.frozen
class SequentialPlan:
    """What a ``--k auto`` run's boundaries were designed for: ``--margin``, ``--max-k``
    and ``--min-k``."""

    margin: float
    max_n: int
    min_n: int = 1


@attrs_classes.frozen
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
    plan: SequentialPlan | None = None
    parts: tuple[tuple[bool, ...], ...] | None = None
    exact: bool = False
    family_high: Mapping[int, float] = attrs.field(factory=dict)
    ceiling: bool = False
    """A mean judged against a ceiling (cost, time): ``trials`` is then the number of
    attempts measured and ``interval`` the mean's Student-t interval."""
    family_low: Mapping[int, float] = attrs.field(factory=dict)
    """A ceiling's lower interval end at the level ``1 − α/B``, by family size ``B``."""

    @property
    def judged_by(self) -> str:
        """:data:`BY_SEQUENTIAL` or :data:`BY_INTERVAL`."""
        sequential = self.sequence is not None or self.parts is not None
        return BY_SEQUENTIAL if sequential else BY_INTERVAL

    @property
    def anytime_valid(self) -> bool:
        """Whether this rate is judged with the ``--k auto`` tools (sequential test or
        confidence sequences), not a fixed-k interval."""
        method = self.interval.method if self.interval is not None else ""
        return (
            self.sequence is not None
            or self.parts is not None
            or method.startswith("confidence-sequence")
        )

    @property
    def method_label(self) -> str:
        """In words, what judges a bar on this rate (``Wilson interval (fixed k)``, …)."""
        if self.parts is not None:
            return METHOD_LABELS["every-task"]
        method = self.interval.method if self.interval is not None else None
        return METHOD_LABELS.get(method or "", method or "nothing measured")


@attrs_classes.frozen
class BarResult:
    """One bar, the rate it was judged on, and its verdict under the gate's policy."""

    bar: Bar
    measured: Measured
    verdict: BarVerdict
    passed: bool
    family: int = 1
    confidence: float = 0.95

    @property
    def reason(self) -> str:
        """One sentence: what the interval says about the bar."""
        if self.bar.ceiling:
            return self._ceiling_reason()
        interval = self.measured.interval
        bar = format_fraction(self.bar.threshold)
        if interval is None:
            return f"nothing was measured (no usable attempt), so the {bar} bar cannot be met"
        shown = f"[{format_fraction(interval.low)}–{format_fraction(interval.high)}]"
        if self.measured.parts is not None:
            return self._every_task_reason(bar)
        if self.measured.judged_by == BY_SEQUENTIAL:
            return self._sequential_reason(bar, shown)
        if self.verdict is BarVerdict.MET:
            return f"the interval {shown} lies at or above {bar}"
        if self.verdict is BarVerdict.FAILED:
            if self.family > 1:
                return (
                    f"the interval {shown} lies below {bar}, also at the "
                    f"{self._family_level} level that shares the error among the "
                    f"{self.family} bars"
                )
            return f"the interval {shown} lies below {bar}"
        if self.family > 1 and interval.high < self.bar.threshold:
            return (
                f"the interval {shown} lies below {bar}, but not at the {self._family_level} "
                f"level that shares the error among the {self.family} bars (Bonferroni): too "
                "few attempts to call it failed"
            )
        return (
            f"the interval {shown} straddles {bar}: too few attempts to tell (more attempts "
            "narrow it)"
        )

    def _ceiling_reason(self) -> str:
        metric = self.bar.metric
        bar = format_measure(metric, self.bar.threshold)
        interval = self.measured.interval
        if self.measured.value is None:
            what = "reported a cost" if metric == COST else "has a duration"
            return f"no counted attempt {what}, so the {bar} ceiling cannot be judged"
        if interval is None:
            return (
                f"one attempt measured ({format_measure(metric, self.measured.value)}): no "
                "spread to judge the mean by (more attempts give it one)"
            )
        shown = f"[{format_measure(metric, interval.low)}–{format_measure(metric, interval.high)}]"
        if self.verdict is BarVerdict.MET:
            return f"the mean's interval {shown} lies at or below {bar}"
        if self.verdict is BarVerdict.FAILED:
            return f"the mean's interval {shown} lies above {bar}"
        if interval.low > self.bar.threshold:
            return (
                f"the mean's interval {shown} lies above {bar}, but not at the "
                f"{self._family_level} level that shares the error among the {self.family} "
                "bars (Bonferroni): too few attempts to call it failed"
            )
        return f"the mean's interval {shown} straddles {bar}: too few attempts to tell"

    @property
    def _family_level(self) -> str:
        return format_fraction(1.0 - (1.0 - self.confidence) / self.family)

    def task_tally(self) -> dict[BarVerdict, int]:
        """For a ``--k auto`` aggregate bar: how many tasks met, failed or left undecided
        (inconclusive) the bar by their own sequential tests."""
        tally = {verdict: 0 for verdict in BarVerdict}
        plan = self.measured.plan
        for part in self.measured.parts or ():
            if part and plan is not None:
                found = designed_verdict(
                    self.bar.threshold, part, plan, self.confidence, self.family
                )
                tally[found] += 1
        return tally

    def tally_words(self) -> str:
        """``of 2 tasks 1 met it, 0 failed it, 1 undecided``."""
        tally = self.task_tally()
        return (
            f"of {sum(tally.values())} tasks {tally[BarVerdict.MET]} met it, "
            f"{tally[BarVerdict.FAILED]} failed it, {tally[BarVerdict.INCONCLUSIVE]} undecided"
        )

    def _every_task_reason(self, bar: str) -> str:
        counted = sum(self.task_tally().values())
        if self.verdict is BarVerdict.MET:
            return f"every task ({counted}) met {bar} by its sequential test (anytime-valid)"
        if self.verdict is BarVerdict.FAILED:
            return f"every task ({counted}) failed {bar} by its sequential test (anytime-valid)"
        return (
            f"the run bar is met only when every task meets {bar} and failed only when every "
            f"task fails it: {self.tally_words()}"
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


@attrs_classes.frozen
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
    family = max(len(bars), 1)
    results = []
    for bar in bars:
        measured = measure.get((bar.metric, bar.task), Measured(None, None))
        verdict = judge_measured(bar.threshold, measured, confidence, family)
        passed = counts_as_pass(verdict, policy)
        results.append(BarResult(bar, measured, verdict, passed, family, confidence))
    return GateResult(results, policy, confidence)


def _gate_mean_interval(counts: list[tuple[int, int]], level: float) -> Interval | None:
    """The run-aggregate interval bars are judged on: the task-mean interval, or for one
    measured task its Wilson interval (computed here from the counts: the intervals reports
    print are another method)."""
    kept = [(s, n) for s, n in counts if n > 0]
    if len(kept) == 1:
        return wilson_interval(kept[0][0], kept[0][1], level)
    return mean_rate_interval(kept, level)


def measure_run(
    run: RunScore, family_run: RunScore | None = None
) -> dict[tuple[str, str | None], Measured]:
    """Every rate a bar can be set on, from a run scored at the gate's confidence: each
    task's success and activation rate (judged by exact tails, shown with the
    Clopper–Pearson interval) and the run's aggregate of each (the task-mean interval; see
    ``docs/statistics.md``). ``family_run`` is the same run scored at ``1 − α/B`` for a
    gate of ``B`` bars: its aggregate upper ends decide a failed aggregate bar."""
    level = run.confidence
    measure: dict[tuple[str, str | None], Measured] = {}
    for task in run.tasks:
        measure[(SCORE, task.name)] = _exact_measured(
            task.score,
            wilson_interval(task.successes, task.usable, level),
            task.successes,
            task.usable,
        )
        if task.activation_expected is not None:
            measure[(ACTIVATION, task.name)] = _exact_measured(
                task.activation_score,
                wilson_interval(task.activation_successes, task.activation_usable, level),
                task.activation_successes,
                task.activation_usable,
            )
    scored = [(t.successes, t.usable) for t in run.tasks]
    acts = [
        (t.activation_successes, t.activation_usable)
        for t in run.tasks
        if t.activation_score is not None
    ]
    wide = family_run.confidence if family_run else None
    measure[(SCORE, None)] = _aggregate_measured(
        run.score,
        _gate_mean_interval(scored, level),
        _gate_mean_interval(scored, wide) if wide else None,
    )
    measure[(ACTIVATION, None)] = _aggregate_measured(
        run.avg_activation_score,
        _gate_mean_interval(acts, level),
        _gate_mean_interval(acts, wide) if wide else None,
    )
    return measure


def _exact_measured(
    value: float | None, shown: Interval | None, successes: int | None, trials: int | None
) -> Measured:
    """A fixed-k task rate as the gate judges it: exact tails, the Clopper–Pearson interval."""
    from caliper.results.exact_binomial import clopper_pearson_interval

    if shown is None or successes is None or not trials:
        return Measured(value, shown, successes, trials)
    interval = clopper_pearson_interval(successes, trials, shown.level)
    return Measured(value, interval, successes, trials, exact=True)


def _aggregate_measured(
    value: float | None, shown: Interval | None, wider: Interval | None
) -> Measured:
    if wider is None or shown is None:
        return Measured(value, shown)
    family = round((1.0 - shown.level) / (1.0 - wider.level)) if wider.level < 1.0 else 1
    return Measured(value, shown, family_high={family: wider.high})


def _sequence_interval(successes: int, trials: int, confidence: float) -> Interval | None:
    """The confidence sequence after ``successes`` in ``trials``, as an :class:`Interval`."""
    from caliper.results.sequential import confidence_sequence

    if trials <= 0:
        return None
    found = confidence_sequence(successes, trials, confidence)
    return Interval(found.low, found.high, confidence, "confidence-sequence")


def _sequence_measured(
    outcomes: list[bool], confidence: float, min_n: int, plan: SequentialPlan | None = None
) -> Measured:
    successes, trials = sum(outcomes), len(outcomes)
    return Measured(
        successes / trials if trials else None,
        _sequence_interval(successes, trials, confidence),
        successes,
        trials,
        tuple(outcomes),
        min_n,
        plan,
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
    results: RunResults, confidence: float, min_k: int = 1, plan: SequentialPlan | None = None
) -> dict[tuple[str, str | None], Measured]:
    """Every rate a bar can be set on, for a run made with ``--k auto``: each task's success
    and activation outcomes in attempt order (judged by the sequential test from the
    ``min_k``-th usable one on, shown with the confidence sequence) and the run's aggregate
    of each. With ``plan`` (the boundaries the run stopped with) an aggregate bar is judged
    by every task's test; without it (a run saved before ``--margin``) by the mean of the
    tasks' confidence sequences (see the module docstring)."""
    timeouts = results.meta.timeouts
    measure: dict[tuple[str, str | None], Measured] = {}
    score_parts: list[list[bool]] = []
    activation_parts: list[list[bool]] = []
    for task in results.tasks:
        attempts = sorted(task.attempts, key=lambda record: record.attempt)
        passes = [a.outcome is Outcome.PASS for a in attempts if a.outcome.scored(timeouts)]
        measure[(SCORE, task.name)] = _sequence_measured(passes, confidence, min_k, plan)
        score_parts.append(passes)
        if task.activation_expected is not None:
            loaded = [a.activation_passed for a in attempts if a.activation_passed is not None]
            measure[(ACTIVATION, task.name)] = _sequence_measured(loaded, confidence, min_k, plan)
            activation_parts.append(loaded)
    for metric, parts in ((SCORE, score_parts), (ACTIVATION, activation_parts)):
        mean = _mean_of_sequences([(sum(p), len(p)) for p in parts], confidence)
        if plan is not None and mean.interval is not None:
            mean = attrs.evolve(mean, plan=plan, parts=tuple(tuple(p) for p in parts))
        measure[(metric, None)] = mean
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
                ceiling=item.get("metric") in CEILINGS,
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
