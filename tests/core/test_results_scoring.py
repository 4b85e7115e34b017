"""Scoring math: success rate, pass@k / pass^k, statuses, activation and usage totals."""

from __future__ import annotations

import json
import math

import pytest
from test_results_support import INFRA, JUDGE, NC, TIMEOUT, C, F, P, attempt, run, snapshot, task

from caliper.plugin.attempt import Usage
from caliper.results.scoring import (
    TaskStatus,
    pass_at_k,
    pass_hat_k,
    score_run,
    score_task,
    scores_data,
    usage_data,
    usage_totals,
)


def test_one_in_three_gives_the_documented_views():
    score = score_task(task("t", [P, F, F]))
    assert score.usable == 3
    assert score.successes == 1
    assert score.score == pytest.approx(1 / 3)
    # k = 3 usable tries: one of them passed (pass@3 estimate 1), not all of them (pass^3 0)
    assert score.pass_at_k == 1.0 and score.pass_hat_k == 0.0
    assert score.status is TaskStatus.PARTIAL


def test_pass_at_k_and_pass_hat_k_are_unbiased():
    """Averaged over every outcome of n tries at pass chance p (exact binomial weights), the
    estimates equal the true 1 - (1 - p)^k and p^k, for every k <= n (Chen et al. 2021)."""
    for n in (1, 3, 5, 10):
        for p in (0.1, 0.5, 0.8):
            weights = [math.comb(n, c) * p**c * (1 - p) ** (n - c) for c in range(n + 1)]
            for k in range(1, n + 1):
                at = sum(w * pass_at_k(c, n, k) for c, w in enumerate(weights))
                hat = sum(w * pass_hat_k(c, n, k) for c, w in enumerate(weights))
                assert at == pytest.approx(1 - (1 - p) ** k)
                assert hat == pytest.approx(p**k)
    # the case: p = 0.5, k = 3, the truth is 87.5% (the old plug-in averaged 75%)
    weights = [math.comb(3, c) / 8 for c in range(4)]
    assert sum(w * pass_at_k(c, 3) for c, w in enumerate(weights)) == pytest.approx(0.875)
    # 2 passes in 5, k = 2: 1 - C(3, 2) / C(5, 2) = 1 - 3/10; pass^2 = C(2, 2) / C(5, 2)
    assert pass_at_k(2, 5, 2) == pytest.approx(0.7)
    assert pass_hat_k(2, 5, 2) == pytest.approx(0.1)
    assert pass_at_k(0, 0) is None and pass_hat_k(1, 2, 3) is None


def test_unusable_and_not_checked_leave_the_denominator():
    # a timeout is a failed attempt (it stays in the denominator); infra and judge errors
    # and the trigger probe's not_checked leave it
    score = score_task(task("t", [P, C, INFRA, TIMEOUT, JUDGE, NC]))
    assert (score.usable, score.successes, score.unusable, score.not_checked) == (3, 1, 2, 1)
    assert score.cheats == 1 and score.timeouts == 1
    assert score.score == pytest.approx(1 / 3)
    # pass@k is at k = the usable count (3), not the attempts: one of the three passed
    assert score.pass_at_k == 1.0 and score.pass_hat_k == 0.0


def test_a_task_with_nothing_usable_is_unmeasured():
    score = score_task(task("t", [INFRA, JUDGE]))
    assert score.score is None
    assert score.pass_at_k is None
    assert score.status is TaskStatus.UNMEASURED
    # timeouts are failed attempts: a task that only timed out is measured, and failed
    assert score_task(task("t", [INFRA, TIMEOUT, JUDGE])).status is TaskStatus.FAIL
    left_out = score_task(task("t", [INFRA, TIMEOUT, JUDGE]), timeouts="unusable")
    assert left_out.status is TaskStatus.UNMEASURED


@pytest.mark.parametrize(
    ("outcomes", "kwargs", "status"),
    [
        ([P, P, P], {}, TaskStatus.PASS),
        ([P, INFRA, P], {}, TaskStatus.PASS),
        ([P, F, P], {}, TaskStatus.PARTIAL),
        ([F, C, F], {}, TaskStatus.FAIL),
        ([P, INFRA], {"aborted": True}, TaskStatus.ABORTED),
        ([NC, NC], {"expected": ["a"], "activated": [["a"], []]}, TaskStatus.TRIGGER_ONLY),
        ([INFRA, NC], {"expected": ["a"], "activated": [None, ["a"]]}, TaskStatus.TRIGGER_ONLY),
    ],
)
def test_status(outcomes, kwargs, status):
    assert score_task(task("t", outcomes, **kwargs)).status is status


def test_run_score_averages_tasks_and_skips_unmeasured():
    results = run(
        [task("a", [P, F, F]), task("b", [P, P]), task("c", [INFRA, INFRA]), task("d", [NC])]
    )
    scored = score_run(results)
    assert scored.score == pytest.approx((1 / 3 + 1) / 2)
    assert scored.scored_tasks == 2
    assert scored.unusable == 2
    assert scored.not_checked == 1


def test_run_with_no_measured_task_has_no_score():
    assert score_run(run([task("a", [INFRA])])).score is None
    assert score_run(run([task("a", [TIMEOUT])], timeouts="unusable")).score is None
    assert score_run(run([task("a", [TIMEOUT])])).score == 0.0  # a failed attempt
    assert score_run(run([])).score is None


def test_activation_per_task_counts_only_asserted_observed_attempts():
    t = task(
        "t",
        [P, F, TIMEOUT, P],
        expected=["s"],
        activated=[["s"], [], None, ["s", "other"]],
    )
    score = score_task(t)
    assert score.activation_usable == 3  # the timeout observed nothing
    assert score.activation_successes == 1
    assert score.activation_score == pytest.approx(1 / 3)
    assert score_task(task("u", [P])).activation_score is None


def test_activation_scoreboard_recall_and_precision():
    results = run(
        [
            task("own", [P, P, F], expected=["mine"], activated=[["mine"], ["mine"], []]),
            task("theirs", [NC, NC], expected=["theirs"], activated=[["mine"], ["theirs"]]),
            task("silent", [NC], expected=[], activated=[["mine"]]),
            # a task that asserts nothing never counts on the board
            task("free", [P], activated=[["mine"]]),
        ],
        skills=[snapshot("mine"), snapshot("theirs"), snapshot("unused")],
    )
    scored = score_run(results)
    board = {s.skill: s for s in scored.activation_per_skill}
    assert list(board) == ["mine", "theirs", "unused"]
    mine = board["mine"]
    assert (mine.expected, mine.fired, mine.hits) == (3, 4, 2)
    assert mine.recall == pytest.approx(2 / 3)
    assert mine.precision == pytest.approx(2 / 4)
    theirs = board["theirs"]
    assert (theirs.expected, theirs.fired, theirs.hits) == (2, 1, 1)
    assert board["unused"].recall is None and board["unused"].precision is None
    assert scored.activation_tasks == 3
    assert scored.avg_activation_score == pytest.approx((2 / 3 + 1 / 2 + 0) / 3)


def test_ablated_skills_are_flagged_on_the_board():
    results = run(
        [task("t", [P], expected=["mine"], activated=[[]])],
        skills=[snapshot("mine", ablated=True)],
        ablated=["mine"],
    )
    assert score_run(results).activation_per_skill[0].ablated is True


def test_usage_totals_split_the_unusable_slice():
    attempts = [
        attempt("t", 1, P, usage=Usage(100, 10, 1000, 5), duration=10.0),
        attempt("t", 2, F, usage=Usage(200, 20, None, None), duration=20.0),
        attempt("t", 3, NC, usage=Usage(50, 5, 0, 0), duration=3.0),
        attempt("t", 4, INFRA, usage=Usage(7, 1, 0, 0), duration=40.0),
        attempt("t", 5, JUDGE, usage=None, duration=120.0),
    ]
    totals = usage_totals(attempts)
    # a timeout is a failed attempt: its spend is in the main figures by default
    with_timeout = usage_totals([*attempts[:4], attempt("t", 5, TIMEOUT, duration=120.0)])
    assert (with_timeout.attempts, with_timeout.unusable_attempts) == (4, 1)
    opted_out = usage_totals([*attempts[:4], attempt("t", 5, TIMEOUT)], timeouts="unusable")
    assert (opted_out.attempts, opted_out.unusable_attempts) == (3, 2)
    assert totals.tokens_in == 100 + 1000 + 5 + 200 + 50
    assert totals.tokens_out == 35
    assert totals.total_tokens == 1355 + 35
    assert totals.attempts == 3  # not_checked is not wasted spend
    assert totals.wall_seconds == 33.0
    assert totals.wall_per_attempt == 11.0
    assert totals.unusable_attempts == 2
    assert totals.unusable_tokens == 8
    assert totals.unusable_wall_seconds == 160.0


def test_usage_totals_without_reports_stay_unknown():
    totals = usage_totals([attempt("t", 1, P, usage=Usage(), duration=None)])
    assert totals.tokens_in is None and totals.tokens_out is None
    assert totals.total_tokens is None
    assert totals.wall_seconds is None and totals.wall_per_attempt is None


@pytest.mark.parametrize(
    ("usage", "total"),
    [
        (Usage(), None),
        (Usage(cost_usd=0.5), None),
        (Usage(input_tokens=0), 0),
        (Usage(10, 2, 3, 4), 19),
        (Usage(None, 7, None, None), 7),
        (Usage(5, None, None, 1), 6),
    ],
)
def test_an_attempts_total_tokens_add_the_counts_it_knows(usage: Usage, total) -> None:
    assert usage.total_tokens == total


def test_json_blocks_are_plain_data():
    results = run([task("a", [P, F], expected=["my-skill"], activated=[["my-skill"], []])])
    scored = score_run(results)
    scores = json.loads(json.dumps(scores_data(scored)))
    assert scores["score"] == 0.5
    assert scores["tasks"][0]["status"] == "PARTIAL"
    assert scores["tasks"][0]["pass_at_k"] == 1.0  # one of the two tries passed
    assert scores["tasks"][0]["pass_hat_k"] == 0.0  # not both
    assert scores["activation_per_skill"][0]["recall"] == 0.5
    usage = json.loads(json.dumps(usage_data(scored)))
    assert usage["total_tokens"] == usage["tokens_in"] + usage["tokens_out"]


def test_judge_tokens_are_summed_apart_from_the_attempts_tokens():
    from caliper.plugin.attempt import Usage
    from caliper.plugin.judge import JudgeUsage
    from caliper.results.models import AttemptRecord, CheckRecord, Outcome
    from caliper.results.scoring import usage_totals

    judged = CheckRecord(
        "expect",
        True,
        usage=JudgeUsage(
            input_tokens=300, output_tokens=20, cache_read_tokens=None, cache_creation_tokens=0
        ),
    )
    records = [
        AttemptRecord("t", 1, Outcome.PASS, usage=Usage(100, 10), checks=[judged]),
        AttemptRecord("t", 2, Outcome.JUDGE_ERROR, usage=Usage(50, 5), checks=[judged]),
        AttemptRecord("t", 3, Outcome.PASS, usage=Usage(100, 10)),
    ]
    totals = usage_totals(records)
    assert totals.judge_tokens == 640
    assert (totals.tokens_in, totals.tokens_out) == (200, 20)
    assert totals.unusable_tokens == 55


def test_task_intervals_are_continuity_corrected_wilson_at_the_level_asked():
    score = score_task(task("t", [P, P, F]), confidence=0.95)
    # 2/3 -> [12.5, 98.2]: the continuity-corrected score limits, as R's prop.test(2, 3)
    assert (score.score_interval.low, score.score_interval.high) == pytest.approx(
        (0.1253, 0.9823), abs=1e-4
    )
    assert score.confidence == 0.95
    assert score.activation_interval is None  # the task asserts no activates:
    wider = score_task(task("t", [P, P, F]), confidence=0.99).score_interval
    assert wider.low < score.score_interval.low and wider.level == 0.99


def test_unusable_attempts_do_not_narrow_the_interval():
    only_usable = score_task(task("t", [P, F])).score_interval
    with_unusable = score_task(task("t", [P, F, INFRA, JUDGE])).score_interval
    assert only_usable == with_unusable
    assert score_task(task("t", [INFRA])).score_interval is None


def test_run_interval_counts_tasks_and_attempts():
    results = run([task("a", [P, P, F]), task("b", [P, P, P]), task("c", [INFRA])])
    scored = score_run(results)
    interval = scored.score_interval
    assert interval.method == "task-mean"
    assert interval.low < scored.score < interval.high
    # a single measured task gives exactly its own interval (R's prop.test(2, 3))
    alone = score_run(run([task("a", [P, P, F]), task("c", [INFRA])])).score_interval
    assert (alone.low, alone.high) == pytest.approx((0.1253, 0.9823), abs=1e-4)
    assert score_run(run([task("c", [INFRA])])).score_interval is None


def test_activation_intervals_on_the_board_and_per_task():
    results = run(
        [task("own", [P, P, F], expected=["mine"], activated=[["mine"], ["mine"], []])],
        skills=[snapshot("mine"), snapshot("unused")],
    )
    scored = score_run(results)
    board = {s.skill: s for s in scored.activation_per_skill}
    recall = board["mine"].recall_interval  # 2 of 3 expected attempts loaded it
    assert (recall.low, recall.high) == pytest.approx((0.1253, 0.9823), abs=1e-4)
    precision = board["mine"].precision_interval  # 2 of 2 loads were wanted: too few tries
    assert (precision.low, precision.high, precision.method) == (0.0, 1.0, "uninformative")
    assert board["unused"].recall_interval is None
    own = scored.tasks[0]
    assert (own.activation_interval.low, own.activation_interval.high) == pytest.approx(
        (0.1253, 0.9823), abs=1e-4
    )
    assert scored.activation_interval == own.activation_interval


def test_scores_data_carries_intervals_as_plain_data():
    results = run(
        [task("own", [P, P, F], expected=["mine"], activated=[["mine"], ["mine"], []])],
        skills=[snapshot("mine")],
    )
    data = json.loads(json.dumps(scores_data(score_run(results, 0.9))))
    assert data["confidence"] == 0.9
    assert set(data["score_interval"]) == {"low", "high", "level", "method"}
    assert data["score_interval"]["level"] == 0.9
    assert data["tasks"][0]["score_interval"]["method"] == "wilson-cc"
    assert data["tasks"][0]["activation_interval"]["level"] == 0.9
    assert data["activation_interval"]["level"] == 0.9
    skill = data["activation_per_skill"][0]
    assert skill["recall_interval"]["method"] == "wilson-cc"
    assert skill["precision_interval"]["high"] == 1.0


def test_a_bad_level_is_refused():
    with pytest.raises(ValueError):
        score_task(task("t", [P]), confidence=1.0)


def test_usage_totals_match_a_plain_recount_of_random_attempts():
    import random

    from caliper.plugin.judge import JudgeUsage
    from caliper.results.models import AttemptRecord, CheckRecord, Outcome

    def maybe(rng):
        return rng.choice([None, 0, rng.randint(1, 999)])

    def known_sum(values):
        known = [v for v in values if v is not None]
        return sum(known) if known else None

    rng = random.Random(7)
    for _ in range(200):
        records = []
        for number in range(rng.randint(0, 8)):
            checks = [
                CheckRecord(
                    "expect",
                    True,
                    usage=None
                    if rng.random() < 0.3
                    else JudgeUsage(maybe(rng), maybe(rng), maybe(rng), maybe(rng)),
                )
                for _ in range(rng.randint(0, 2))
            ]
            usage = (
                None
                if rng.random() < 0.2
                else Usage(maybe(rng), maybe(rng), maybe(rng), maybe(rng))
            )
            duration = None if rng.random() < 0.2 else rng.uniform(0, 100)
            outcome = rng.choice(list(Outcome))
            records.append(
                AttemptRecord("t", number, outcome, usage=usage, checks=checks,
                              duration_seconds=duration)
            )  # fmt: skip
        left = [r for r in records if r.outcome in (Outcome.INFRA_ERROR, Outcome.JUDGE_ERROR)]
        kept = [r for r in records if r not in left]
        totals = usage_totals(records)

        def tokens_in(u):
            parts = [u.input_tokens, u.cache_read_tokens, u.cache_creation_tokens]
            return None if all(p is None for p in parts) else sum(p or 0 for p in parts)

        def check_total(c):
            u = c.usage
            parts = [] if u is None else [getattr(u, f) for f in
                     ("input_tokens", "output_tokens", "cache_read_tokens",
                      "cache_creation_tokens")]  # fmt: skip
            return None if all(p is None for p in parts) else sum(p or 0 for p in parts)

        walls = [r.duration_seconds for r in kept if r.duration_seconds is not None]
        wall = None
        for seconds in walls:
            wall = seconds if wall is None else wall + seconds
        assert totals.attempts == len(kept) and totals.unusable_attempts == len(left)
        assert totals.judge_tokens == known_sum(check_total(c) for r in records for c in r.checks)
        assert totals.tokens_in == known_sum(tokens_in(r.usage) for r in kept if r.usage)
        assert totals.tokens_out == known_sum(r.usage.output_tokens for r in kept if r.usage)
        assert totals.wall_seconds == wall
        assert totals.wall_per_attempt == (wall / len(walls) if walls else None)
        assert totals.unusable_tokens == known_sum(r.usage.total_tokens for r in left if r.usage)
