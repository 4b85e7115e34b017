"""A timed-out attempt is a failed attempt wherever a run is judged: in ``--k auto``'s
stopping rule and its gate, and in the "every attempt unusable" exit code, as in scoring.
``--timeouts unusable`` leaves them out in all of these alike."""

from __future__ import annotations

import pytest

from caliper.results.models import AttemptRecord, Outcome
from caliper.runner.adaptive import AdaptiveK, AdaptiveSettings
from caliper_fakeagent.harness import Workspace


def _record(attempt: int, outcome: Outcome) -> AttemptRecord:
    return AttemptRecord(task_name="t", attempt=attempt, outcome=outcome)


@pytest.mark.parametrize(("timeouts", "counted"), [("failure", 6), ("unusable", 0)])
def test_adaptive_k_counts_timeouts_as_failed_attempts(timeouts: str, counted: int) -> None:
    settings = AdaptiveSettings(max_k=40, run_bar=0.8, timeouts=timeouts)
    adaptive = AdaptiveK(settings, ["t"])
    for attempt in range(1, 7):
        adaptive.observe(_record(attempt, Outcome.TIMEOUT))
    state = adaptive._tasks["t"]
    assert (state.usable, state.successes) == (counted, 0)


@pytest.mark.parametrize(("flag", "code"), [((), 0), (("--timeouts", "unusable"), 1)])
def test_a_run_whose_every_attempt_timed_out_is_a_measured_zero(
    tmp_path, flag: tuple[str, ...], code: int
) -> None:
    """Every attempt timing out is a 0% success rate (exit 0, the rate is in the report), not
    "every attempt unusable" (exit 1) — unless the run left timeouts out."""
    space = Workspace.create(tmp_path)
    spec = space.spec(
        'tasks:\n  - name: slow\n    prompt: "fake: sleep 30"\n    assert: "assert True"\n'
    )
    done = space.run(spec, "--k", "2", "--timeout", "1", *flag)
    assert done.returncode == code, done.stdout + done.stderr
    assert [a["outcome"] for a in done.task("slow")["attempts"]] == ["timeout", "timeout"]
    if code:
        assert "Every attempt was unusable" in done.stderr
    else:
        assert "Every attempt was unusable" not in done.stderr
