"""Measure one description on some probes, through an ordinary caliper run.

A measurement writes a copy of the skill with the candidate description, and a spec whose
``skills:`` are that copy plus the real neighbourhood (so competitors are real) and whose
tasks are the probes as activation-only tasks. The runner runs it k times per probe and
saves it like any ``caliper run``, so ``caliper report``, ``compare`` and the HTML page work
on it. The tuner then scores each probe itself (see :meth:`Probe.correct`).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from caliper.errors import CaliperError
from caliper.results.models import Outcome, RunResults
from caliper.results.stats import Interval, interval_data, mean_rate_interval, rate_interval
from caliper.runner import RunOptions, run_spec
from caliper.runner.run.ending import AllUnusable
from caliper.system import attrs_classes
from caliper.system.output_file import write_output
from caliper.system.skill_tree import SkillUnusable, copy_tree
from caliper.tune.description import replace_description
from caliper.tune.probes import Probe

if TYPE_CHECKING:
    from caliper.host.plugins import PluginHost

_UNOBSERVED = (Outcome.INFRA_ERROR, Outcome.TIMEOUT)


@attrs_classes.frozen
class ProbeScore:
    """One probe under one description: ``correct`` of ``observed`` attempts did what the
    probe asks; ``fired`` attempts loaded the tuned skill; ``unobserved`` attempts showed
    nothing (infra error, timeout, activation not observable)."""

    probe: Probe
    observed: int
    correct: int
    fired: int
    unobserved: int

    def to_json(self) -> dict[str, Any]:
        """Plain data for the summary."""
        return {
            "probe": self.probe.name,
            "observed": self.observed,
            "correct": self.correct,
            "fired": self.fired,
            "unobserved": self.unobserved,
        }


@attrs_classes.frozen
class Rates:
    """Recall, precision and accuracy of the tuned skill over some probe scores.

    ``recall``: attempts that loaded the skill among those whose probe expects it;
    ``precision``: attempts whose probe expects it among those that loaded it (both Wilson
    intervals over attempts, as the activation scoreboard); ``accuracy``: the mean over
    probes of each probe's share of correct attempts (the task-mean interval of
    ``caliper.results.stats``).
    """

    recall: float | None
    recall_interval: Interval | None
    precision: float | None
    precision_interval: Interval | None
    accuracy: float | None
    accuracy_interval: Interval | None
    expected: int
    fired: int
    hits: int

    def to_json(self) -> dict[str, Any]:
        """Plain data for the summary."""
        return {
            "recall": self.recall,
            "recall_interval": interval_data(self.recall_interval),
            "precision": self.precision,
            "precision_interval": interval_data(self.precision_interval),
            "accuracy": self.accuracy,
            "accuracy_interval": interval_data(self.accuracy_interval),
            "expected": self.expected,
            "fired": self.fired,
            "hits": self.hits,
        }


def rates(scores: Sequence[ProbeScore], target: str, confidence: float) -> Rates:
    """The :class:`Rates` of ``scores`` at ``confidence``."""
    expected = sum(s.observed for s in scores if s.probe.expects_target(target))
    hits = sum(s.fired for s in scores if s.probe.expects_target(target))
    fired = sum(s.fired for s in scores)
    counts = [(s.correct, s.observed) for s in scores if s.observed]
    accuracy = sum(c / n for c, n in counts) / len(counts) if counts else None
    return Rates(
        recall=hits / expected if expected else None,
        recall_interval=rate_interval(hits, expected, confidence),
        precision=hits / fired if fired else None,
        precision_interval=rate_interval(hits, fired, confidence),
        accuracy=accuracy,
        accuracy_interval=mean_rate_interval(counts, confidence),
        expected=expected,
        fired=fired,
        hits=hits,
    )


@attrs_classes.frozen
class Measurement:
    """One description measured on one side of the split (``phase``: train or test)."""

    label: str
    description: str
    phase: str
    scores: tuple[ProbeScore, ...]
    run_path: Path | None
    attempts: int
    tokens: int
    rates: Rates

    def to_json(self) -> dict[str, Any]:
        """Plain data for the summary."""
        return {
            "label": self.label,
            "phase": self.phase,
            "run": str(self.run_path) if self.run_path else None,
            "attempts": self.attempts,
            "tokens": self.tokens,
            **self.rates.to_json(),
            "probes": [s.to_json() for s in self.scores],
        }


@attrs_classes.frozen
class Neighbourhood:
    """The skill under tuning (its folder and name) and the folders of its competitors.

    ``sandbox`` and ``mcp`` are the spec sections to carry over, as plain data.
    """

    skill_dir: Path
    name: str
    neighbours: tuple[Path, ...] = ()
    sandbox: dict[str, Any] | None = None
    mcp: dict[str, Any] | None = None


def write_candidate(neighbourhood: Neighbourhood, description: str, folder: Path) -> Path:
    """Copy the skill to ``folder/<name>`` with ``description``; return the copy's folder."""
    destination = folder / neighbourhood.name
    if destination.exists():
        shutil.rmtree(destination)

    try:  # the installers' rules: links only inside the folder, specs and results left out
        copy_tree(neighbourhood.skill_dir, destination)
    except SkillUnusable as exc:
        raise CaliperError(str(exc)) from None

    skill_file = destination / "SKILL.md"
    text = skill_file.read_bytes().decode("utf-8")
    write_output(skill_file, replace_description(text, description))
    return destination


def write_spec(
    neighbourhood: Neighbourhood,
    candidate_dir: Path,
    probes: Sequence[Probe],
    path: Path,
) -> Path:
    """Write the measurement's spec at ``path``: the candidate, the neighbours, the probes."""
    data: dict[str, Any] = {
        "skills": [str(candidate_dir), *(str(p) for p in neighbourhood.neighbours)],
    }
    if neighbourhood.sandbox:
        data["sandbox"] = neighbourhood.sandbox
    if neighbourhood.mcp:
        data["mcp"] = neighbourhood.mcp
    data["tasks"] = [
        {
            "name": probe.name,
            "prompt": probe.prompt,
            "activates": probe.expected_set(neighbourhood.name),
        }
        for probe in probes
    ]

    header = (
        "# Written by `caliper tune`: one activation-only task per probe. Re-run it with\n"
        "# `caliper run` to measure this description again.\n"
    )
    write_output(path, header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return path


def score_results(results: RunResults, probes: Sequence[Probe], target: str) -> list[ProbeScore]:
    """Score each probe's attempts in a saved run (tasks matched by name)."""
    by_name = {task.name: task for task in results.tasks}
    scores = []
    for probe in probes:
        task = by_name.get(probe.name)
        observed = correct = fired = unobserved = 0
        for record in task.attempts if task else ():
            if record.activated is None or record.outcome in _UNOBSERVED:
                unobserved += 1
                continue
            observed += 1
            correct += probe.correct(target, record.activated)
            fired += target in record.activated
        scores.append(ProbeScore(probe, observed, correct, fired, unobserved))
    return scores


def _tokens(results: RunResults) -> int:
    total = 0
    for task in results.tasks:
        for record in task.attempts:
            if record.usage is not None and record.usage.total_tokens is not None:
                total += record.usage.total_tokens
    return total


@attrs_classes.frozen
class RunSettings:
    """How each measurement runs: the engine, attempts per probe and the runner's limits."""

    model: str | None
    k: int
    workers: int
    timeout: float
    confidence: float


def measure(
    neighbourhood: Neighbourhood,
    description: str,
    probes: Sequence[Probe],
    *,
    label: str,
    phase: str,
    folder: Path,
    spec_name: str,
    settings: RunSettings,
    host: PluginHost,
    on_run: Callable[[Path | None], None] | None = None,
) -> Measurement:
    """Run ``probes`` k times with ``description`` and score them.

    Raises the runner's :class:`CaliperError` when the run could not be done (setup error,
    Ctrl-C: the finished attempts are still saved as a partial run).
    """
    candidate = write_candidate(neighbourhood, description, folder / "skill")
    spec_path = write_spec(neighbourhood, candidate, probes, folder / f"{spec_name}.eval.yaml")
    report = run_spec(
        RunOptions(
            spec_path=spec_path,
            k=settings.k,
            workers=settings.workers,
            timeout=settings.timeout,
            model=settings.model,
        ),
        host=host,
    )
    if on_run is not None:
        on_run(report.saved_to)
    problem = report.problem()
    if problem is not None and not isinstance(problem, AllUnusable):
        raise problem  # the results could not be saved, a setup error, a stop signal
    scores = score_results(report.results, probes, neighbourhood.name)
    attempts = sum(len(t.attempts) for t in report.results.tasks)
    return Measurement(
        label=label,
        description=description,
        phase=phase,
        scores=tuple(scores),
        run_path=report.saved_to,
        attempts=attempts,
        tokens=_tokens(report.results),
        rates=rates(scores, neighbourhood.name, settings.confidence),
    )
