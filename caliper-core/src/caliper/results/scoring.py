"""Every number derived from a saved run: scores, activation, usage. Pure functions, no I/O.

Saved files hold only observations; the functions here turn them into what reports show, so
``caliper report`` on an old file always agrees with what ``caliper run`` printed.

The rules, in short (``docs/results.md`` has the long form):

* an attempt is *usable* when its outcome is ``pass``, ``task_fail``, ``cheat`` or
  ``timeout`` (a timeout is a failed attempt; a run saved with ``--timeouts unusable``
  leaves timeouts out instead, ``RunMeta.timeouts``); ``infra_error`` and ``judge_error`` are
  *unusable* (no fair shot) and ``not_checked`` (a trigger probe with nothing to grade) is
  neither;
* a task's score is successes / usable attempts, ``None`` when nothing was usable;
* the run's score is the mean of task scores, skipping tasks whose score is ``None``;
* activation is scored apart from success, over attempts whose ``activation_passed`` is set;
* every rate carries a confidence interval at the level asked for (``confidence``), derived
  here and never stored (``caliper.results.stats`` has the methods).
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Iterable

import attrs

from caliper.results.models import (
    TIMEOUTS_FAILURE,
    AttemptRecord,
    Outcome,
    RunResults,
    TaskResult,
)
from caliper.results.stats import (
    DEFAULT_CONFIDENCE,
    Interval,
    check_confidence,
    interval_data,
    mean_rate_interval,
    rate_interval,
)
from caliper.system import attrs_classes

UNUSABLE = frozenset(outcome for outcome in Outcome if outcome.left_out(TIMEOUTS_FAILURE))
"""The outcomes left out of the rates by default (infra and judge errors)."""


@functools.cache
def left_out_outcomes(timeouts: str = TIMEOUTS_FAILURE) -> frozenset[Outcome]:
    """The outcomes left out of the rates under a run's ``timeouts`` policy (worked out once
    per policy: a big run's report asks per task and per attempt list)."""
    return frozenset(outcome for outcome in Outcome if outcome.left_out(timeouts))


@functools.cache
def scored_outcomes(timeouts: str = TIMEOUTS_FAILURE) -> tuple[Outcome, ...]:
    """The outcomes a rate counts under a run's ``timeouts`` policy, in :class:`Outcome`
    order (worked out once per policy)."""
    return tuple(outcome for outcome in Outcome if outcome.scored(timeouts))


class TaskStatus(str, enum.Enum):
    """The one-word verdict a task gets in the results table."""

    PASS = "PASS"
    PARTIAL = "PARTIAL"
    FAIL = "FAIL"
    ABORTED = "ABORTED"
    UNMEASURED = "UNMEASURED"
    TRIGGER_ONLY = "TRIGGER-ONLY"


@attrs_classes.frozen
class UsageTotals:
    """Tokens and wall time of a set of attempts, with the unusable slice kept apart.

    ``tokens_in`` counts input, cache reads and cache writes; ``tokens_out`` the output. The
    main figures cover usable and not-checked attempts; ``unusable_*`` covers attempts left
    out of the rates (``infra_error``, ``judge_error``, and ``timeout`` under
    ``--timeouts unusable``: spend that bought no verdict).
    ``judge_tokens`` is what LLM judges spent grading (every attempt), kept out of the rest:
    the main figures measure the skill, not the grading.
    Token figures are ``None`` when no counted attempt reported usage.
    """

    attempts: int = 0
    tokens_in: int | None = None
    tokens_out: int | None = None
    wall_seconds: float | None = None
    wall_per_attempt: float | None = None
    unusable_attempts: int = 0
    unusable_tokens: int | None = None
    unusable_wall_seconds: float | None = None
    judge_tokens: int | None = None

    @property
    def total_tokens(self) -> int | None:
        """``tokens_in + tokens_out`` (``None`` when neither is known)."""
        if self.tokens_in is None and self.tokens_out is None:
            return None
        return (self.tokens_in or 0) + (self.tokens_out or 0)


@attrs_classes.frozen
class TaskScore:
    """The derived numbers of one task.

    ``pass_at_k`` / ``pass_hat_k`` are the unbiased estimates (:func:`pass_at_k`) at k = the
    usable attempts. ``score_interval`` is the :func:`~caliper.results.stats.rate_interval`
    of ``successes / usable`` and ``activation_interval`` that of
    ``activation_successes / activation_usable``, both at ``confidence``; ``None`` when the
    rate has no attempts to rest on.
    """

    name: str
    k: int
    attempts: int
    usable: int
    successes: int
    score: float | None
    pass_at_k: float | None
    pass_hat_k: float | None
    unusable: int
    not_checked: int
    cheats: int
    aborted: bool
    status: TaskStatus
    activation_expected: list[str] | None
    activation_usable: int
    activation_successes: int
    activation_score: float | None
    usage: UsageTotals
    score_interval: Interval | None = None
    activation_interval: Interval | None = None
    confidence: float = DEFAULT_CONFIDENCE
    timeouts: int = 0
    """Attempts that timed out (counted as failures unless ``timeouts_counted`` is false)."""
    timeouts_counted: bool = True


@attrs_classes.frozen
class SkillActivation:
    """One declared skill's line on the activation scoreboard.

    Counted over observed attempts (``activated`` known) of tasks that assert ``activates:``.
    ``expected``: attempts whose task expects the skill; ``fired``: attempts where it loaded;
    ``hits``: both. ``recall = hits / expected``, ``precision = hits / fired``;
    ``recall_interval`` / ``precision_interval`` are their intervals (``rate_interval``;
    ``None`` when the divisor is 0).
    """

    skill: str
    expected: int
    fired: int
    hits: int
    ablated: bool = False
    recall_interval: Interval | None = None
    precision_interval: Interval | None = None

    @property
    def recall(self) -> float | None:
        return self.hits / self.expected if self.expected else None

    @property
    def precision(self) -> float | None:
        return self.hits / self.fired if self.fired else None


@attrs_classes.frozen
class RunScore:
    """The derived numbers of a whole run.

    ``score_interval`` is the interval of ``score`` (a mean of task rates: see
    :func:`caliper.results.stats.mean_rate_interval`, which counts both each task's binomial
    noise and the spread between tasks); ``activation_interval`` the same for
    ``avg_activation_score``. Both at ``confidence``.
    """

    tasks: list[TaskScore]
    score: float | None
    scored_tasks: int
    unusable: int
    not_checked: int
    avg_activation_score: float | None
    activation_tasks: int
    activation_per_skill: list[SkillActivation]
    usage: UsageTotals
    score_interval: Interval | None = None
    activation_interval: Interval | None = None
    confidence: float = DEFAULT_CONFIDENCE
    asserts_activation: bool = False
    """True when at least one task asserts ``activates:`` (decided once, by :func:`score_run`:
    views ask it for every row)."""


def rate(successes: int, usable: int) -> float | None:
    """``successes / usable``, or ``None`` when there is nothing to divide by."""
    return successes / usable if usable else None


def pass_at_k(successes: int, usable: int, k: int | None = None) -> float | None:
    """The unbiased estimate of pass@k, the chance that at least one of ``k`` fresh tries
    passes, from ``successes`` passes in ``usable`` tries: ``1 − C(usable − successes, k) /
    C(usable, k)`` (Chen et al. 2021, "Evaluating large language models trained on code").

    ``k`` defaults to ``usable`` (every try made), where the estimate is 1 when any try passed
    and 0 otherwise. ``None`` when nothing was usable or ``k`` is not in ``1..usable``.
    """
    k = usable if k is None else k
    if usable <= 0 or not 1 <= k <= usable:
        return None
    return 1.0 - math.comb(usable - successes, k) / math.comb(usable, k)


def pass_hat_k(successes: int, usable: int, k: int | None = None) -> float | None:
    """The unbiased estimate of pass^k, the chance that all of ``k`` fresh tries pass:
    ``C(successes, k) / C(usable, k)`` (the same sampling argument as :func:`pass_at_k`).

    ``k`` defaults to ``usable``, where the estimate is 1 when every try passed and 0
    otherwise. ``None`` when nothing was usable or ``k`` is not in ``1..usable``.
    """
    k = usable if k is None else k
    if usable <= 0 or not 1 <= k <= usable:
        return None
    return math.comb(successes, k) / math.comb(usable, k)


def mean(values: Iterable[float | None]) -> float | None:
    """The mean of the values that are not ``None`` (``None`` if there are none)."""
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _add(total: int | float | None, value: int | float | None) -> int | float | None:
    if value is None:
        return total
    return value if total is None else total + value


def usage_totals(
    attempts: Iterable[AttemptRecord], timeouts: str = TIMEOUTS_FAILURE
) -> UsageTotals:
    """Token and wall totals of ``attempts``, with the slice left out of the rates apart
    (under the run's ``timeouts`` policy)."""
    left_out = left_out_outcomes(timeouts)
    counted = timed = unusable = 0
    tokens_in = tokens_out = wall = None
    bad_tokens = bad_wall = None
    judge = None
    # Sums written out (a 50,000-attempt report runs this loop twice per attempt), each
    # taken in the attempts' order.
    for record in attempts:
        if record.checks:
            tokens = judge_tokens(record)
            if tokens is not None:
                judge = tokens if judge is None else judge + tokens
        usage = record.usage
        seconds = record.duration_seconds
        if record.outcome in left_out:
            unusable += 1
            tokens = usage.total_tokens if usage else None
            if tokens is not None:
                bad_tokens = tokens if bad_tokens is None else bad_tokens + tokens
            if seconds is not None:
                bad_wall = seconds if bad_wall is None else bad_wall + seconds
            continue
        counted += 1
        if usage is not None:
            fresh, read, written = (
                usage.input_tokens,
                usage.cache_read_tokens,
                usage.cache_creation_tokens,
            )
            # tokens in: fresh input, cache reads and cache writes
            if fresh is not None or read is not None or written is not None:
                tokens = (fresh or 0) + (read or 0) + (written or 0)
                tokens_in = tokens if tokens_in is None else tokens_in + tokens
            output = usage.output_tokens
            if output is not None:
                tokens_out = output if tokens_out is None else tokens_out + output
        if seconds is not None:
            timed += 1
            wall = seconds if wall is None else wall + seconds
    return UsageTotals(
        attempts=counted,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        wall_seconds=wall,
        wall_per_attempt=wall / timed if wall is not None and timed else None,
        unusable_attempts=unusable,
        unusable_tokens=bad_tokens,
        unusable_wall_seconds=bad_wall,
        judge_tokens=judge,
    )


def judge_tokens(record: AttemptRecord) -> int | None:
    """Tokens LLM judges reported spending on this attempt (each check's ``usage``)."""
    total = None
    for check in record.checks:
        tokens = check.usage.total_tokens if check.usage is not None else None
        if tokens is not None:
            total = _add(total, tokens)
    return total


def _status(task: TaskResult, usable: int, successes: int, not_checked: int) -> TaskStatus:
    if task.aborted:
        return TaskStatus.ABORTED
    if usable == 0:
        if not_checked and task.activation_expected is not None:
            return TaskStatus.TRIGGER_ONLY
        return TaskStatus.UNMEASURED
    if successes == usable:
        return TaskStatus.PASS
    return TaskStatus.PARTIAL if successes else TaskStatus.FAIL


_OUTCOMES = tuple(Outcome)
"""Every outcome, in declaration order (iterating the enum class itself is slower)."""


def score_task(
    task: TaskResult, confidence: float = DEFAULT_CONFIDENCE, timeouts: str = TIMEOUTS_FAILURE
) -> TaskScore:
    """The derived numbers of one task, intervals at ``confidence``; timed-out attempts are
    failures unless ``timeouts`` is ``unusable``."""
    check_confidence(confidence)
    attempts = task.attempts
    counts = dict.fromkeys(_OUTCOMES, 0)
    act_usable = act_successes = 0
    for record in attempts:  # one pass (a 50,000-attempt report scores every attempt)
        counts[record.outcome] += 1
        if record.activation_passed is not None:
            act_usable += 1
            act_successes += record.activation_passed is True
    usable = sum(counts[outcome] for outcome in scored_outcomes(timeouts))
    left_out = left_out_outcomes(timeouts)
    successes = counts[Outcome.PASS]
    not_checked = counts[Outcome.NOT_CHECKED]
    score = rate(successes, usable)
    return TaskScore(
        name=task.name,
        k=task.k,
        attempts=len(attempts),
        usable=usable,
        successes=successes,
        score=score,
        pass_at_k=pass_at_k(successes, usable),
        pass_hat_k=pass_hat_k(successes, usable),
        unusable=sum(counts[outcome] for outcome in left_out),
        not_checked=not_checked,
        cheats=counts[Outcome.CHEAT],
        aborted=task.aborted,
        status=_status(task, usable, successes, not_checked),
        activation_expected=(
            list(task.activation_expected) if task.activation_expected is not None else None
        ),
        activation_usable=act_usable,
        activation_successes=act_successes,
        activation_score=rate(act_successes, act_usable),
        usage=usage_totals(attempts, timeouts),
        score_interval=rate_interval(successes, usable, confidence),
        activation_interval=rate_interval(act_successes, act_usable, confidence),
        confidence=confidence,
        timeouts=counts[Outcome.TIMEOUT],
        timeouts_counted=Outcome.TIMEOUT.scored(timeouts),
    )


# Outcomes whose transcript may be cut short: what they loaded says nothing about activation.
_UNOBSERVED = (Outcome.INFRA_ERROR, Outcome.TIMEOUT)


def activation_scoreboard(
    results: RunResults, confidence: float = DEFAULT_CONFIDENCE
) -> list[SkillActivation]:
    """Recall and precision per declared skill (see :class:`SkillActivation`)."""
    ablated = set(results.meta.ablated)
    names: list[str] = [s.name for s in results.meta.skill_snapshots]
    for snapshot in results.meta.skill_snapshots:
        if snapshot.ablated:
            ablated.add(snapshot.name)
    for task in results.tasks:
        for name in task.activation_expected or ():
            if name not in names:
                names.append(name)
    board = []
    for name in names:
        expected = fired = hits = 0
        for task in results.tasks:
            if task.activation_expected is None:
                continue
            wanted = name in task.activation_expected
            for record in task.attempts:
                if record.activated is None or record.outcome in _UNOBSERVED:
                    continue
                loaded = name in record.activated
                expected += wanted
                fired += loaded
                hits += wanted and loaded
        board.append(
            SkillActivation(
                name,
                expected,
                fired,
                hits,
                ablated=name in ablated,
                recall_interval=rate_interval(hits, expected, confidence),
                precision_interval=rate_interval(hits, fired, confidence),
            )
        )
    return board


def score_run(results: RunResults, confidence: float = DEFAULT_CONFIDENCE) -> RunScore:
    """The derived numbers of a whole run, intervals at ``confidence``."""
    policy = results.meta.timeouts
    tasks = [score_task(t, confidence, policy) for t in results.tasks]
    activation_tasks = [t for t in tasks if t.activation_score is not None]
    return RunScore(
        tasks=tasks,
        score=mean(t.score for t in tasks),
        scored_tasks=sum(1 for t in tasks if t.score is not None),
        unusable=sum(t.unusable for t in tasks),
        not_checked=sum(t.not_checked for t in tasks),
        avg_activation_score=mean(t.activation_score for t in activation_tasks),
        activation_tasks=len(activation_tasks),
        activation_per_skill=activation_scoreboard(results, confidence),
        usage=usage_totals((a for t in results.tasks for a in t.attempts), policy),
        score_interval=mean_rate_interval([(t.successes, t.usable) for t in tasks], confidence),
        activation_interval=mean_rate_interval(
            [(t.activation_successes, t.activation_usable) for t in activation_tasks], confidence
        ),
        confidence=confidence,
        asserts_activation=any(t.activation_expected is not None for t in tasks),
    )


def _usage_data(usage: UsageTotals) -> dict:
    data = attrs.asdict(usage)
    data["total_tokens"] = usage.total_tokens
    return data


def scores_data(run: RunScore) -> dict:
    """The ``scores`` block of ``caliper report --format json`` (plain data)."""
    tasks = []
    for task in run.tasks:
        row = attrs.asdict(task, recurse=False)
        row["status"] = task.status.value
        row["usage"] = _usage_data(task.usage)
        row["score_interval"] = interval_data(task.score_interval)
        row["activation_interval"] = interval_data(task.activation_interval)
        tasks.append(row)
    skills = []
    for skill in run.activation_per_skill:
        row = attrs.asdict(skill, recurse=False)
        row.update(
            recall=skill.recall,
            precision=skill.precision,
            recall_interval=interval_data(skill.recall_interval),
            precision_interval=interval_data(skill.precision_interval),
        )
        skills.append(row)
    return {
        "confidence": run.confidence,
        "score": run.score,
        "score_interval": interval_data(run.score_interval),
        "scored_tasks": run.scored_tasks,
        "unusable": run.unusable,
        "not_checked": run.not_checked,
        "avg_activation_score": run.avg_activation_score,
        "activation_interval": interval_data(run.activation_interval),
        "activation_tasks": run.activation_tasks,
        "activation_per_skill": skills,
        "tasks": tasks,
    }


def usage_data(run: RunScore) -> dict:
    """The ``usage_totals`` block of ``caliper report --format json`` (plain data)."""
    return _usage_data(run.usage)
