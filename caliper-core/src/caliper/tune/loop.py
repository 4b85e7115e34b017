"""The tuning loop: measure, propose, keep only statistically supported gains, then test.

See ``docs/tuning.md``. Choosing uses the train probes only; the test probes measure the
incumbent and the winner once, at the end, and are never used to choose.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from caliper.errors import CaliperError, UsageError
from caliper.results.significance import GREATER, holm_adjust, stratified_exact_test
from caliper.system import attrs_classes, stop_policy
from caliper.system.output_file import write_output
from caliper.tune.measure import Measurement, Neighbourhood, RunSettings, measure
from caliper.tune.probes import Probe, ProbeSet
from caliper.tune.proposer import Failures, Proposal, propose
from caliper.tune.split import Split

if TYPE_CHECKING:
    from caliper.host.engine import Engine
    from caliper.host.plugins import PluginHost
    from caliper.results.stats import Interval


@attrs_classes.frozen
class TuneSettings:
    """The knobs of one tuning session (``caliper tune`` flags)."""

    run: RunSettings
    proposer_model: str | None
    iterations: int
    candidates: int
    max_attempts: int | None
    seed: int


@attrs_classes.frozen
class Candidate:
    """A proposed description and how it did on train against the incumbent of its round.

    ``p_value`` is the one-sided stratified exact test of "better than the incumbent",
    ``adjusted_p`` after Holm's correction over the round's candidates.
    """

    id: str
    iteration: int
    description: str
    measurement: Measurement | None = None
    gain: float | None = None
    p_value: float | None = None
    adjusted_p: float | None = None
    accepted: bool = False
    note: str | None = None
    against: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain data for the summary."""
        return {
            "id": self.id,
            "iteration": self.iteration,
            "description": self.description,
            "gain": self.gain,
            "p_value": self.p_value,
            "adjusted_p": self.adjusted_p,
            "accepted": self.accepted,
            "note": self.note,
            "against": self.against,
            "train": self.measurement.to_json() if self.measurement else None,
        }


@attrs_classes.define
class Budget:
    """A running count of attempts and tokens; ``limit`` caps attempts (``None``: none)."""

    limit: int | None
    attempts: int = 0
    tokens: int = 0
    proposer_tokens: int = 0
    proposer_calls: int = 0

    def fits(self, attempts: int, reserve: int = 0) -> bool:
        """Whether ``attempts`` more still leave ``reserve`` within the limit."""
        return self.limit is None or self.attempts + attempts + reserve <= self.limit

    def add(self, measurement: Measurement) -> None:
        """Count a finished measurement."""
        self.attempts += measurement.attempts
        self.tokens += measurement.tokens


@attrs_classes.define
class TuneOutcome:
    """Everything a session found (also written as ``summary.json``)."""

    skill: str
    folder: Path
    split: Split
    original: str
    baseline: Measurement
    winner: Candidate | None = None
    candidates: list[Candidate] = attrs.field(factory=list)
    test_before: Measurement | None = None
    test_after: Measurement | None = None
    stop_reason: str = ""
    budget: Budget = attrs.field(factory=lambda: Budget(None))

    @property
    def final_description(self) -> str:
        """The winner's description, or the original when nothing won."""
        return self.winner.description if self.winner else self.original


def check_budget(split: Split, k: int, limit: int | None) -> None:
    """Raise a usage error when ``limit`` attempts cannot cover one train measurement plus
    the two reserved test measurements."""
    train, reserve = len(split.train) * k, 2 * len(split.test) * k
    if limit is not None and train + reserve > limit:
        raise UsageError(
            f"--max-attempts {limit} is too small: measuring the current description on "
            f"train takes {train} attempts and the final test {reserve}.",
            hint=f"Give at least --max-attempts {train + reserve}, or lower --k.",
        )


def smallest_reachable_p(train_probes: int, k: int) -> float:
    """The smallest one-sided p-value any candidate can reach on ``train_probes`` probes of
    ``k`` attempts each: the tuner's own test (:func:`stratified_exact_test`) of the best
    possible outcome, every probe wrong on all ``k`` attempts before and right on all ``k``
    after. A round of one candidate keeps it as it is under Holm's correction."""
    if train_probes <= 0:
        return 1.0
    return stratified_exact_test([(0, k, k, k)] * train_probes, alternative=GREATER)


MAX_SUGGESTED_K = 50
"""The largest ``--k`` :func:`check_reachable` looks through for one that would work."""


def check_reachable(split: Split, k: int, alpha: float) -> None:
    """Raise a usage error when no candidate could ever be accepted: even the best possible
    outcome on the train probes at ``k`` gives a p-value above ``alpha``. The message names
    the smallest ``--k`` and the smallest number of train probes that would work."""
    train = len(split.train)
    best = smallest_reachable_p(train, k)
    if best <= alpha:
        return
    better_k = next(
        (n for n in range(k + 1, MAX_SUGGESTED_K + 1) if smallest_reachable_p(train, n) <= alpha),
        None,
    )
    more_probes = next(n for n in range(train + 1, 10_000) if smallest_reachable_p(n, k) <= alpha)
    ways = [f"at least {more_probes} train probes at --k {k}"]
    if better_k is not None:
        ways.insert(0, f"--k {better_k}")
    raise UsageError(
        f"No candidate could ever be accepted: with {train} train probe"
        f"{'s' if train != 1 else ''} at --k {k}, the smallest p-value a candidate can reach "
        f"is {best:.3g} (every probe wrong on every attempt before, right after), above "
        f"{alpha:.2g} (--confidence {1 - alpha:g}).",
        hint=f"Use {' or '.join(ways)} (add probes, or lower --test-fraction).",
    )


def pairs(before: Measurement, after: Measurement) -> list[tuple[int, int, int, int]]:
    """``(correct, observed)`` before and after, per probe (matched by name)."""
    after_by_name = {s.probe.name: s for s in after.scores}
    out = []
    for score in before.scores:
        other = after_by_name.get(score.probe.name)
        if other is not None:
            out.append((score.correct, score.observed, other.correct, other.observed))
    return out


def _failures(measurement: Measurement, target: str) -> Failures:
    missed, false_fires, right = [], [], []
    for score in measurement.scores:
        wrong = score.observed - score.correct
        if not score.observed:
            continue
        if wrong == 0:
            right.append(score.probe.prompt)
        elif score.probe.expects_target(target):
            missed.append((score.probe.prompt, wrong, score.observed))
        else:
            false_fires.append((score.probe.prompt, wrong, score.observed))
    return Failures(tuple(missed), tuple(false_fires), tuple(right))


Emit = Callable[[str], None]


class Tuner:
    """One tuning session; :meth:`run` does it and returns a :class:`TuneOutcome`."""

    def __init__(
        self,
        neighbourhood: Neighbourhood,
        original: str,
        probes: ProbeSet,
        split: Split,
        settings: TuneSettings,
        folder: Path,
        *,
        host: PluginHost,
        proposer: Engine,
        emit: Emit,
    ):
        self.neighbourhood = neighbourhood
        self.original = original
        self.probes = probes
        self.split = split
        self.settings = settings
        self.folder = folder
        self.host = host
        self.proposer = proposer
        self.emit = emit
        self.budget = Budget(settings.max_attempts)
        self.alpha = 1.0 - settings.run.confidence
        self.runs: list[str] = []

    # measuring -----------------------------------------------------------------------------
    def _cost(self, probes: tuple[Probe, ...]) -> int:
        return len(probes) * self.settings.run.k

    @property
    def test_reserve(self) -> int:
        """Attempts kept back for the final test measurements (incumbent and winner)."""
        return 2 * self._cost(self.split.test)

    def _measure(self, description: str, label: str, phase: str) -> Measurement:
        stop_policy.check()  # never start a measurement after a stop
        probes = self.split.train if phase == "train" else self.split.test
        name = self.neighbourhood.name
        result = measure(
            self.neighbourhood,
            description,
            probes,
            label=label,
            phase=phase,
            folder=self.folder / "candidates" / label / phase,
            spec_name=f"tune-{name}-{phase}",
            settings=self.settings.run,
            host=self.host,
            on_run=lambda path: self.runs.append(str(path)) if path else None,
        )
        self.budget.add(result)
        return result

    def _line(self, m: Measurement) -> str:
        r = m.rates
        limit = f"/{self.budget.limit}" if self.budget.limit else ""
        return (
            f"accuracy {_pct(r.accuracy)} {_iv(r.accuracy_interval)}, recall {_pct(r.recall)}, "
            f"precision {_pct(r.precision)} ({m.attempts} attempts; "
            f"budget {self.budget.attempts}{limit}"
            f" attempts, {self.budget.tokens + self.budget.proposer_tokens:,} tokens)"
        )

    # the loop ------------------------------------------------------------------------------
    def run(self) -> TuneOutcome:
        """Measure the original, iterate, test; write ``summary.json`` as it goes."""
        name = self.neighbourhood.name
        check_budget(self.split, self.settings.run.k, self.budget.limit)
        self.emit(
            f"Measuring the current description on train ({len(self.split.train)} probes "
            f"× k={self.settings.run.k}) ..."
        )
        baseline = self._measure(self.original, "c0", "train")
        if baseline.rates.accuracy is None:
            raise CaliperError(
                "No attempt of the current description showed which skills loaded (every "
                "attempt was unusable or unobservable), so there is nothing to improve on.",
                hint=f"See the saved run: caliper report {baseline.run_path}",
            )
        self.emit(f"  c0 (current): {self._line(baseline)}")
        outcome = TuneOutcome(
            name, self.folder, self.split, self.original, baseline, budget=self.budget
        )
        incumbent = Candidate("c0", 0, self.original, baseline)
        outcome.candidates.append(incumbent)
        try:
            self._search(outcome, incumbent)
        except BaseException as exc:  # Ctrl-C, a setup error: keep what was found so far
            outcome.stop_reason = f"stopped early: {type(exc).__name__}: {exc}".rstrip(": ")
            self._save(outcome)
            raise
        self._save(outcome)
        return outcome

    def _search(self, outcome: TuneOutcome, incumbent: Candidate) -> None:
        """The proposal rounds, then the test measurements (fills ``outcome``)."""
        train_cost = self._cost(self.split.train)
        number = 0
        stop = f"ran all {self.settings.iterations} iteration(s)"
        for iteration in range(1, self.settings.iterations + 1):
            self._save(outcome)
            if incumbent.measurement.rates.accuracy == 1.0:
                stop = "the incumbent is already right on every train attempt"
                break
            if not self.budget.fits(train_cost, self.test_reserve):
                stop = f"--max-attempts {self.budget.limit} reached (kept the best so far)"
                break
            proposal = self._propose(outcome, incumbent)
            if not proposal.candidates:
                stop = f"iteration {iteration}: the proposer gave no usable description"
                break
            count = len(proposal.candidates)
            self.emit(f"Iteration {iteration}: {count} candidate{'s' if count != 1 else ''}")
            round_, budget_hit = self._measure_round(
                outcome, incumbent, iteration, proposal.candidates, number
            )
            number += count
            accepted = self._judge_round(outcome, round_)
            if accepted is not None:
                incumbent = accepted
            if budget_hit:
                stop = f"--max-attempts {self.budget.limit} reached (kept the best so far)"
                break
            if accepted is None:
                stop = (
                    f"iteration {iteration}: no candidate beat the incumbent with statistical "
                    "support"
                )
                break
        outcome.stop_reason = stop
        self.emit(f"Stopped: {stop}.")
        self._test(outcome)

    def _propose(self, outcome: TuneOutcome, incumbent: Candidate) -> Proposal:
        """Ask the proposer for new descriptions improving on ``incumbent``; count its cost
        and report the proposals it dropped and any error."""
        name = self.neighbourhood.name
        proposal = propose(
            self.proposer,
            name,
            incumbent.description,
            _failures(incumbent.measurement, name),
            self.settings.candidates,
            tried=[c.description for c in outcome.candidates],
            workspace=self.folder,
        )
        self.budget.proposer_calls += proposal.calls
        self.budget.proposer_tokens += proposal.tokens
        for text, why in proposal.dropped:
            self.emit(f"  dropped a proposal: {why}: {json.dumps(text)[:120]}")
        if proposal.error:
            self.emit(f"  the proposer gave no answer: {proposal.error}")
        return proposal

    def _measure_round(
        self,
        outcome: TuneOutcome,
        incumbent: Candidate,
        iteration: int,
        texts: Sequence[str],
        number: int,
    ) -> tuple[list[Candidate], bool]:
        """Measure each proposed description on train against ``incumbent`` (labels go on
        from ``c{number}``); return the measured candidates and whether the budget left one
        unmeasured (such candidates go straight into ``outcome``)."""
        train_cost = self._cost(self.split.train)
        round_: list[Candidate] = []
        budget_hit = False
        for text in texts:
            number += 1
            label = f"c{number}"
            if not self.budget.fits(train_cost, self.test_reserve):
                budget_hit = True
                note = "not measured: --max-attempts would be exceeded"
                skipped = Candidate(label, iteration, text, note=note, against=incumbent.id)
                outcome.candidates.append(skipped)
                self.emit(f"  {label}: {note}\n      {json.dumps(text)}")
                continue
            m = self._measure(text, label, "train")
            self.emit(f"  {label}: {self._line(m)}\n      {json.dumps(text)}")
            gain = (
                m.rates.accuracy - incumbent.measurement.rates.accuracy
                if m.rates.accuracy is not None
                else None
            )
            p = stratified_exact_test(pairs(incumbent.measurement, m), alternative=GREATER)
            round_.append(Candidate(label, iteration, text, m, gain, p, against=incumbent.id))
        return round_, budget_hit

    def _judge_round(self, outcome: TuneOutcome, round_: list[Candidate]) -> Candidate | None:
        """Holm-adjust the round's p-values, note each candidate's fate in ``outcome`` and
        return the accepted one (the largest supported gain, also made the winner), if any."""
        adjusted = holm_adjust([c.p_value for c in round_]) if round_ else []
        round_ = [attrs.evolve(c, adjusted_p=a) for c, a in zip(round_, adjusted, strict=False)]
        supported = [
            c for c in round_ if c.gain is not None and c.gain > 0 and c.adjusted_p <= self.alpha
        ]
        best = max(supported, key=lambda c: (c.gain, -c.adjusted_p), default=None)
        winner = None
        for c in round_:
            accepted = best is not None and c.id == best.id
            note = (
                "accepted"
                if accepted
                else (
                    "no gain"
                    if not c.gain or c.gain <= 0
                    else "gain not statistically supported "
                    f"(Holm p = {c.adjusted_p:.3f} > {self.alpha:.2f})"
                )
            )
            c = attrs.evolve(c, accepted=accepted, note=note)
            outcome.candidates.append(c)
            self.emit(
                f"  {c.id} vs {c.against}: Δ accuracy {_pts(c.gain)}, one-sided p = "
                f"{c.p_value:.3f} (Holm {c.adjusted_p:.3f}): {note}"
            )
            if accepted:
                winner = c
                outcome.winner = c
        return winner

    def _test(self, outcome: TuneOutcome) -> None:
        if not self.split.test:
            return
        self.emit(
            f"Measuring on the test probes ({len(self.split.test)}, never used to choose) ..."
        )
        outcome.test_before = self._measure(self.original, "c0", "test")
        if outcome.winner is not None:
            outcome.test_after = self._measure(
                outcome.winner.description, outcome.winner.id, "test"
            )
        else:
            outcome.test_after = outcome.test_before

    def _save(self, outcome: TuneOutcome) -> None:
        write_json(self.folder / "summary.json", summary_data(outcome, self.runs))


def summary_data(outcome: TuneOutcome, runs: list[str]) -> dict[str, Any]:
    """The tuning summary as plain data (``summary.json``)."""
    b = outcome.budget
    return {
        "skill": outcome.skill,
        "original_description": outcome.original,
        "final_description": outcome.final_description,
        "changed": outcome.winner is not None,
        "winner": outcome.winner.id if outcome.winner else None,
        "stop_reason": outcome.stop_reason,
        "split": {
            "seed": outcome.split.seed,
            "train": len(outcome.split.train),
            "test": len(outcome.split.test),
        },
        "budget": {
            "limit": b.limit,
            "attempts": b.attempts,
            "tokens": b.tokens,
            "proposer_calls": b.proposer_calls,
            "proposer_tokens": b.proposer_tokens,
        },
        "candidates": [c.to_json() for c in outcome.candidates],
        "test": {
            "before": outcome.test_before.to_json() if outcome.test_before else None,
            "after": outcome.test_after.to_json() if outcome.test_after else None,
        },
        "runs": runs,
    }


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON through the one output writer (atomically)."""
    write_output(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def _iv(interval: Interval | None) -> str:
    if interval is None:
        return "[–]"
    return f"[{interval.low * 100:.0f}–{interval.high * 100:.0f}%]"


def _pts(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:+.0f} pts"
