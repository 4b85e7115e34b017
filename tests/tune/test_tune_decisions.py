"""The tuner's choices, with measurements and proposals stubbed (the real ones are covered
end to end in ``test_tune_e2e.py``): Holm over a round, the largest supported gain, the
budget stopping mid-round. p-values are checked against hand-computed hypergeometric
probabilities, not against the code's own formula."""

from __future__ import annotations

from pathlib import Path

import pytest

from caliper.tune import loop
from caliper.tune.measure import Measurement, Neighbourhood, ProbeScore, RunSettings, rates
from caliper.tune.probes import Probe, ProbeSet
from caliper.tune.proposer import Proposal
from caliper.tune.split import Split

T = "mine"
TRAIN = tuple(Probe(f"t{i}", f"trigger {i}", should_trigger=True) for i in range(3)) + tuple(
    Probe(f"o{i}", f"other {i}", should_trigger=False) for i in range(3)
)
TEST = (
    Probe("tt", "test trigger", should_trigger=True),
    Probe("to", "test other", should_trigger=False),
)
K = 2


def fires_on(triggers: int):
    """A description that loads the skill on the first ``triggers`` trigger probes only."""

    def correct(probe: Probe) -> int:
        if probe.should_trigger:
            index = int(probe.name[-1]) if probe.name.startswith("t") and probe.name != "tt" else 0
            return K if index < triggers else 0
        return K

    return correct


BEHAVIOUR = {
    "original": fires_on(0),
    "two probes": fires_on(2),
    "three probes": fires_on(3),
    "one probe": fires_on(1),
    "original again": fires_on(0),
}


def fake_measure(
    neighbourhood, description, probes, *, label, phase, folder, spec_name, settings, host, on_run
):
    scores = [
        ProbeScore(
            p, K, BEHAVIOUR[description](p), BEHAVIOUR[description](p) if p.should_trigger else 0, 0
        )
        for p in probes
    ]
    return Measurement(
        label, description, phase, tuple(scores), None, len(probes) * K, 0, rates(scores, T, 0.95)
    )


def tuner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rounds: list[list[str]], max_attempts=None
):
    answers = iter(rounds)
    monkeypatch.setattr(loop, "measure", fake_measure)
    monkeypatch.setattr(
        loop, "propose", lambda *a, **k: Proposal(tuple(next(answers, [])), calls=1)
    )
    settings = loop.TuneSettings(
        run=RunSettings(model=None, k=K, workers=1, timeout=1.0, confidence=0.95),
        proposer_model=None,
        iterations=5,
        candidates=3,
        max_attempts=max_attempts,
        seed=0,
    )
    return loop.Tuner(
        Neighbourhood(tmp_path, T),
        "original",
        ProbeSet(TRAIN + TEST, tmp_path, "probes"),
        Split(TRAIN, TEST, 0, 0.4),
        settings,
        tmp_path,
        host=None,
        proposer=None,
        emit=lambda _text: None,
    )


def by_description(outcome) -> dict[str, loop.Candidate]:
    return {c.description: c for c in outcome.candidates}


def test_two_probes_alone_are_enough(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two probes from 0/2 to 2/2: p = (1/C(4,2))² = 1/36 ≈ 0.0278 ≤ 0.05: accepted."""
    outcome = tuner(tmp_path, monkeypatch, [["two probes"]]).run()
    chosen = by_description(outcome)["two probes"]
    assert chosen.p_value == pytest.approx(1 / 36)
    assert chosen.accepted and outcome.winner is chosen


def test_holm_over_a_round_declines_what_one_candidate_alone_would_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beside a useless second candidate, 1/36 becomes 2/36 ≈ 0.056 after Holm: declined."""
    outcome = tuner(tmp_path, monkeypatch, [["two probes", "original again"]]).run()
    two = by_description(outcome)["two probes"]
    assert two.p_value == pytest.approx(1 / 36) and two.adjusted_p == pytest.approx(2 / 36)
    assert not two.accepted and outcome.winner is None
    assert "no candidate beat the incumbent" in outcome.stop_reason


def test_the_largest_supported_gain_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three probes: p = 1/216, Holm ×2 = 1/108; two probes: 1/36, Holm 2/36 (declined)."""
    outcome = tuner(tmp_path, monkeypatch, [["two probes", "three probes"]]).run()
    three = by_description(outcome)["three probes"]
    assert three.p_value == pytest.approx(1 / 216) and three.adjusted_p == pytest.approx(2 / 216)
    assert outcome.winner is three
    assert "already right" in outcome.stop_reason


def test_a_candidate_must_beat_the_new_incumbent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 2 compares with round 1's winner: one probe more (0/2 → 2/2) is p = 1/6, declined."""
    outcome = tuner(tmp_path, monkeypatch, [["two probes"], ["three probes"]]).run()
    three = by_description(outcome)["three probes"]
    assert three.against == "c1" and three.p_value == pytest.approx(1 / 6)
    assert outcome.winner.description == "two probes"


def test_the_budget_stops_mid_round_with_the_best_so_far(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """12 (baseline) + 12 (first candidate) + 8 (test reserve) = 32: the second candidate
    would go past it, so it is recorded unmeasured and the first, supported, is kept."""
    outcome = tuner(tmp_path, monkeypatch, [["two probes", "three probes"]], max_attempts=32).run()
    skipped = by_description(outcome)["three probes"]
    assert skipped.measurement is None and "not measured" in skipped.note
    assert outcome.winner.description == "two probes"
    assert "--max-attempts 32 reached" in outcome.stop_reason
    assert outcome.budget.attempts == 12 + 12 + 4 + 4
