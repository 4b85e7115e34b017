"""The saved-results schema: one ``RunResults`` per run, written as JSON.

Only raw observations are persisted; every score, rate and total is derived when read
(see ``caliper.results.scoring``), so a saved file can never disagree with itself.
``SCHEMA_VERSION`` is bumped whenever a field changes meaning; loaders accept older files.
"""

from __future__ import annotations

from typing import Any

import attrs

from caliper.plugin.attempt import Turn, Usage
from caliper.plugin.judge import JudgeUsage
from caliper.results.outcome import TIMEOUT_POLICIES as TIMEOUT_POLICIES  # re-exported
from caliper.results.outcome import TIMEOUTS_FAILURE as TIMEOUTS_FAILURE
from caliper.results.outcome import TIMEOUTS_UNUSABLE as TIMEOUTS_UNUSABLE
from caliper.results.outcome import Outcome as Outcome
from caliper.system import attrs_classes

SCHEMA_VERSION = 1


@attrs_classes.define
class CheckRecord:
    """One judge's verdict on an attempt, under the task key it owns.

    ``details`` is the judge's own data. ``usage``, ``backend``, ``model`` and
    ``prompt_version`` are the typed fields of :class:`caliper.plugin.judge.Verdict` (a judge that
    asked a model fills them); a results file keeps them inside ``details``, under
    :data:`STORED_JUDGE_FIELDS` (the form files had before these fields existed).
    """

    key: str
    passed: bool | None
    reason: str | None = None
    error: str | None = None
    details: dict[str, Any] = attrs.field(factory=dict)
    usage: JudgeUsage | None = None
    backend: str | None = None
    model: str | None = None
    prompt_version: str | None = None


STORED_JUDGE_FIELDS = {
    "backend": "judge_backend",
    "model": "judge_model",
    "prompt_version": "prompt_version",
    "usage": "judge_usage",
}
"""Typed :class:`CheckRecord` field → the key of ``details`` it is saved under."""


@attrs_classes.define
class TryRecord:
    """One earlier try of an attempt that was tried again, kept so its spend stays visible.

    Written by the automatic retry inside a run (``--retries``) and by ``caliper retry``
    (``run_id`` then names the run the try was made in). The attempt's own fields are its
    last try, which is the one scored.
    """

    outcome: Outcome
    reason: str | None = None
    duration_seconds: float | None = None
    usage: Usage | None = None
    model: str | None = None
    retry_after: float | None = None
    """Seconds the agent CLI asked to wait before trying again (``Retry-After``), if it said."""
    waited_seconds: float | None = None
    """Seconds caliper waited after this try before the next one."""
    run_id: str | None = None


@attrs_classes.define
class AttemptRecord:
    """One attempt of one task, as observed.

    ``activated`` is ``None`` when nothing was observable (never a made-up ``[]``).
    ``undeclared`` names skills the agent loaded that the spec did not declare (empty when
    none was seen; files saved before it existed load with ``[]``).
    ``activation_passed`` is ``None`` when the task asserted no ``activates:``.
    ``history`` and ``history_sha256`` name the planted conversation the attempt started from
    (the task's ``history:`` as written, and the SHA-256 of the file's bytes), or are ``None``.
    """

    task_name: str
    attempt: int
    outcome: Outcome
    reason: str | None = None
    duration_seconds: float | None = None
    usage: Usage | None = None
    final_answer: str | None = None
    transcript: list[Turn] | None = None
    activated: list[str] | None = None
    activation_passed: bool | None = None
    checks: list[CheckRecord] = attrs.field(factory=list)
    model: str | None = None
    error: str | None = None
    setup_failed: bool = False
    forbidden_reads: list[str] = attrs.field(factory=list)
    undeclared: list[str] = attrs.field(factory=list)
    history: str | None = None
    history_sha256: str | None = None
    built_in: list[str] = attrs.field(factory=list)
    """Skills shipped inside the agent CLI that the model loaded: seen, never scored."""
    user_setup: dict[str, list[str]] | None = None
    """What of the user's own setup this attempt loaded (names per kind), when asked."""
    retry_after: float | None = None
    """Seconds the agent CLI asked to wait before another try (``Retry-After``), if it said."""
    workdir_archive: str | None = None
    """``--keep-workdirs``: the final working directory's archive, relative to the results
    folder of the spec (``<run-id>.workdirs/<task>-<n>.tar.gz``)."""
    workdir_note: str | None = None
    """What the kept working directory lacks (a size cap cut it, links outside left out)."""
    tries: list[TryRecord] = attrs.field(factory=list)
    """Earlier tries of this attempt, oldest first (empty when it was tried once)."""
    started_at: str | None = None
    """When this (last) try of the attempt started: a UTC ISO time to the millisecond (files
    saved before it load with ``None``)."""

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASS


@attrs_classes.define
class TaskResult:
    """All attempts of one task. ``aborted`` is true when ``--fail-fast`` stopped it early."""

    name: str
    index: int
    k: int
    attempts: list[AttemptRecord] = attrs.field(factory=list)
    activation_expected: list[str] | None = None
    check_keys: list[str] = attrs.field(factory=list)
    aborted: bool = False
    stop_reason: str | None = None
    """Why an adaptive run (``--k auto``) stopped adding attempts to this task."""


@attrs_classes.define
class SkillSnapshot:
    """How one neighbourhood member was obtained for this run."""

    name: str
    source_kind: str
    declared_as: str
    path: str | None = None
    git_repo: str | None = None
    git_ref: str | None = None
    git_sha: str | None = None
    content_hash: str | None = None
    description: str | None = None
    ablated: bool = False


@attrs_classes.define
class RunMeta:
    """Who produced a run and with what: engine, versions, neighbourhood, flags."""

    run_id: str
    spec_name: str
    spec_path: str
    started_at: str
    finished_at: str | None = None
    backend: str | None = None
    model: str | None = None
    judge_backend: str | None = None
    judge_model: str | None = None
    judge_prompt_version: str | None = None
    caliper_version: str | None = None
    plugin_versions: dict[str, str] = attrs.field(factory=dict)
    cli_version: str | None = None
    k: int = 1
    timeout: float | None = None
    workers: int | None = None
    ablated: list[str] = attrs.field(factory=list)
    """Declared skills ``--ablate`` left out of the neighbourhood."""
    ablated_mcp: list[str] = attrs.field(factory=list)
    """Declared ``mcp:`` servers ``--ablate`` left out (files saved before it load with ``[]``)."""
    user_customizations: bool = False
    """Whether attempts also loaded the user's own CLI setup (``--user-customizations``)."""
    user_setup: dict[str, list[str]] = attrs.field(factory=dict)
    """The names of what was loaded from the user's setup, per kind, over every attempt."""
    skill_snapshots: list[SkillSnapshot] = attrs.field(factory=list)
    spec_hash: str | None = None
    partial: bool = False
    stop_reason: str | None = None
    requested_model: str | None = None
    """``--model`` as given (``None``: the default engine); ``--resume`` and ``retry`` reuse it."""
    judge_requested: str | None = None
    """``--judge-model`` as given."""
    retries: int | None = None
    """``--retries``: automatic tries per attempt after a transient failure."""
    parent_run: str | None = None
    """``SPEC/RUN-ID`` of the run this one was derived from (``caliper retry``, ``regrade``,
    ``review``)."""
    derived_by: str | None = None
    """``retry``, ``regrade`` or ``review`` when this run was derived from ``parent_run``."""
    changes: list[str] = attrs.field(factory=list)
    """What differs from the parent run (retried attempts, a new judge model, a spec change)."""
    resumed_at: list[str] = attrs.field(factory=list)
    """When ``caliper run --resume`` continued this run (UTC ISO times)."""
    forced: list[str] = attrs.field(factory=list)
    """The differences ``--force`` let a resume or retry go on despite."""
    adaptive: dict[str, Any] | None = None
    """``--k auto``: the method, ``max_k``, ``min_k``, ``precision``, ``confidence`` and bars
    (``k`` is then ``max_k``; each task's ``stop_reason`` says why it stopped)."""
    shard: dict[str, Any] | None = None
    """``--shard I/N``: ``index``, ``count``, ``plan_fingerprint`` (SHA-256 of the whole
    plan), ``plan_attempts`` and ``attempts`` (this shard's share); ``None``: not a shard."""
    matrix: dict[str, Any] | None = None
    """``caliper run --model A --model B …``: ``id`` (shared by the matrix's runs), ``engine``
    (this run's ``--model``) and ``engines`` (every ``--model``, in order); ``None`` otherwise."""
    baseline: dict[str, Any] | None = None
    """``caliper run --baseline``: ``id`` (shared by the pair's runs, and by every engine's pair
    of one invocation), ``arm`` (``full``, or ``control``: without ``left_out``), ``left_out``
    (the skills and ``mcp:`` servers the control arm leaves out), ``engine`` (``--model`` as
    given, ``""`` for the default), ``seed`` (of the interleaved order) and ``order`` (how the
    two arms' attempts were put in one queue); ``None`` otherwise."""
    merged_from: list[dict[str, Any]] = attrs.field(factory=list)
    """``caliper merge``: the shard runs this run was merged from (``shard``, ``run``)."""
    incomplete: bool = False
    """Read from a journal without a final results file (the run was killed or is running)."""
    timeouts: str = TIMEOUTS_FAILURE
    """How timed-out attempts are scored: ``failure`` (they count as failed attempts) or
    ``unusable`` (left out of the rates, ``--timeouts unusable``). Files saved before it load
    as ``failure``."""
    gate: dict[str, Any] | None = None
    """The bars ``caliper run`` was given and their verdicts, as judged when it ran (the
    ``gate`` block of ``report --format json``; ``None`` without bars or in older files)."""
    schema_version: int = SCHEMA_VERSION


@attrs_classes.define
class RunResults:
    """One saved run: its metadata and every task's attempts."""

    meta: RunMeta
    tasks: list[TaskResult] = attrs.field(factory=list)
