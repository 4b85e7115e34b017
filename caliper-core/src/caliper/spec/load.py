"""Load a ``*.eval.yaml`` spec into :class:`~caliper.spec.model.Spec`, or say everything wrong.

``check_spec`` collects every problem (it is what ``caliper validate`` prints); ``load_spec``
raises :class:`SpecInvalid` with all of them. Neither touches the network: git skill sources
are looked up in the local cache only, and what could not be checked becomes a note. A run
loads with :func:`load_spec_for_run`, which fetches git sources and returns the resolved
skills too, so each skill is resolved and hashed once per run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from caliper.errors import SpecError
from caliper.plugin.judge import Judge
from caliper.plugin.skills import ResolvedSkill
from caliper.spec.fields import Reporter, type_name
from caliper.spec.model import McpServer, SkillSource, Spec, spec_name_for
from caliper.spec.problems import Problem, SpecInvalid, sort_key
from caliper.spec.sections import (
    check_sandbox,
    check_skills,
    check_top,
    check_user_customizations,
)
from caliper.spec.skills import (
    InstallSummary,
    SourceOutcome,
    duplicate_names,
    hidden_activation_entries,
    resolve_source,
)
from caliper.spec.tasks import Neighbourhood, TaskChecker
from caliper.spec.yamldoc import Document, load_document
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.spec.gitcache import GitCache

__all__ = ["Problem", "SpecCheck", "SpecInvalid", "check_spec", "load_spec", "load_spec_for_run"]


@attrs_classes.frozen
class SpecCheck:
    """The outcome of checking one spec.

    ``spec`` is set only when there are no ``problems``. ``notes`` say what could not be
    checked (e.g. an uncached git source); ``warnings`` are suspicious but allowed things;
    ``skills`` are the neighbourhood members that could be read; ``installs`` says, for each
    of them, what an attempt gets of its folder.
    """

    spec: Spec | None
    problems: list[Problem]
    notes: list[str]
    warnings: list[Problem] = attrs.field(factory=list)
    skills: list[ResolvedSkill] = attrs.field(factory=list)
    installs: list[InstallSummary] = attrs.field(factory=list)

    @property
    def valid(self) -> bool:
        return not self.problems


def _whole_file(path: Path, message: str, line: int | None = 1) -> Problem:
    return Problem(path, line, 1 if line else None, "", message)


def check_spec(
    path: Path,
    judges: Mapping[str, Judge],
    *,
    cache_dir: Path | None = None,
    judge_failures: Mapping[str, str] | None = None,
    online: bool = False,
    on_note: Callable[[str], None] | None = None,
    hashed: bool = True,
    list_files: bool = False,
) -> SpecCheck:
    """Check ``path`` completely, without running anything or (by default) using the network.

    ``judges`` maps task keys to installed judges; ``judge_failures`` maps keys whose judge
    plugin failed to import to the reason, so a task using one gets a precise message.

    With ``online`` (what a run does, :func:`load_spec_for_run`) git sources are fetched, so
    the skills in :attr:`SpecCheck.skills` are the ones the run installs, resolved and hashed
    this once; ``on_note`` then hears each remark as it comes (a cached commit used, files a
    copy left out), and a source that cannot be fetched nor found in the cache is a
    :class:`~caliper.errors.SpecError`.

    With ``hashed=False`` (``caliper validate``, which shows no hash) the spec's ``sha256``
    is left empty and the skills' ``content_hash`` ``None``: the skill folders are still
    scanned and checked, their files not read. ``list_files`` keeps each skill's installed
    paths in :attr:`SpecCheck.installs` (``validate --verbose``).
    """
    path = Path(path)
    document, problems = load_document(path, hashed=hashed)
    if document is None:
        return SpecCheck(None, problems, [])
    data = document.data
    if data is None:
        problems.append(
            _whole_file(path, "the spec is empty; it needs at least `tasks:` (see docs/spec.md)")
        )
        return SpecCheck(None, problems, [])
    if not isinstance(data, dict):
        problems.append(
            _whole_file(
                path,
                f"the spec must be a YAML mapping (skills:, sandbox:, "
                f"mcp:, tasks:), found {type_name(data)}",
            )
        )
        return SpecCheck(None, problems, [])
    checker = _SpecChecker(document, judges, cache_dir, judge_failures, problems)
    checker.online, checker.on_note, checker.hashed = online, on_note, hashed
    checker.list_files = list_files
    return checker.run()


class _SpecChecker:
    """One pass over a parsed spec: sections, then skills (offline), then tasks."""

    def __init__(
        self,
        document: Document,
        judges: Mapping[str, Judge],
        cache_dir: Path | None,
        judge_failures: Mapping[str, str] | None,
        problems: list[Problem],
    ):
        self.document = document
        self.judges = judges
        self.cache_dir = cache_dir
        self._cache: GitCache | None = None
        self.judge_failures = judge_failures
        self.report = Reporter(document)
        self.report.problems.extend(problems)
        self.online = False
        self.on_note: Callable[[str], None] | None = None
        self.hashed = True
        self.list_files = False
        self.installs: list[InstallSummary] = []

    def run(self) -> SpecCheck:
        report, data, path = self.report, self.document.data, self.document.path
        check_top(report, data)
        indexed_sources = check_skills(report, data.get("skills"))
        sandbox = check_sandbox(report, data.get("sandbox"), path.parent)
        mcp = _check_mcp(report, data.get("mcp"))
        user_customizations = check_user_customizations(report, data)
        skills, neighbourhood, notes = self._resolve(indexed_sources)
        if len(indexed_sources) != len(_list(data.get("skills"))):
            neighbourhood = attrs.evolve(
                neighbourhood,
                complete=False,
                unknown_sources=(*neighbourhood.unknown_sources, "invalid skills: entries"),
            )
        checker = TaskChecker(
            report,
            self.judges,
            spec_dir=path.parent,
            neighbourhood=neighbourhood,
            judge_failures=self.judge_failures,
        )
        tasks = checker.check(data.get("tasks"))
        notes.extend(checker.notes)
        if any(task.conversation is not None for task in tasks):
            from caliper.spec.conversation import slash_command_warnings

            for field, message in slash_command_warnings(tasks, {s.name for s in skills}):
                report.warn(field, message)
        activation_keys = [key for key, judge in self.judges.items() if judge.scores_activation]
        for field, message in hidden_activation_entries(data.get("tasks"), skills, activation_keys):
            report.warn(field, message)  # a run refuses it where the backend hides the skill

        problems = sorted(report.problems, key=sort_key)
        warnings = sorted(report.warnings, key=sort_key)
        if problems:
            return SpecCheck(None, problems, notes, warnings, skills, self.installs)
        spec = Spec(
            path=path.resolve(),
            name=spec_name_for(path),
            skills=tuple(source for _, source in indexed_sources),
            sandbox=sandbox,
            mcp=mcp,
            tasks=tasks,
            user_customizations=user_customizations,
            sha256=self.document.sha256,
        )
        return SpecCheck(spec, [], notes, warnings, skills, self.installs)

    def _resolve(
        self, indexed_sources: list[tuple[int, SkillSource]]
    ) -> tuple[list[ResolvedSkill], Neighbourhood, list[str]]:
        """Read every source offline; the skills found, the names known, and notes."""
        report, path = self.report, self.document.path
        notes: list[str] = []
        unknown: list[str] = []
        outcomes = []
        for index, source in indexed_sources:
            position = self.document.position(("skills", index))
            outcome = resolve_source(
                source,
                index,
                path,
                cache=self._git_cache,
                offline=not self.online,
                column=position[1] if position else None,
                hash_content=self.hashed,
                list_files=self.list_files,
            )
            if self.online:
                self._note_online(index, outcome)
            outcomes.append(outcome)
            if outcome.installed is not None:
                self.installs.append(outcome.installed)
            report.problems.extend(outcome.problems)
            report.warnings.extend(outcome.warnings)
            uncached = outcome.skill is None and not outcome.problems
            if outcome.note:
                suffix = ": not checked (validate never uses the network)" if uncached else ""
                notes.append(f"{path}: skills[{index}]: {outcome.note}{suffix}")
            if uncached:
                unknown.append(f"{source.repo} is not cached")
            elif outcome.skill is None:
                unknown.append(f"skills[{index}] could not be read")
        for index, message in duplicate_names(outcomes):
            report.error(("skills", index), message)
        skills = [o.skill for o in outcomes if o.skill is not None]
        neighbourhood = Neighbourhood(
            names=tuple(s.name for s in skills),
            complete=not unknown,
            unknown_sources=tuple(unknown),
        )
        return skills, neighbourhood, notes

    def _git_cache(self) -> GitCache:
        """The git cache, made for the first git source (never for local skills only)."""
        if self._cache is None:
            from caliper.spec.gitcache import GitCache

            self._cache = GitCache(self.cache_dir)
        return self._cache

    def _note_online(self, index: int, outcome: SourceOutcome) -> None:
        """A run's remarks on one source, at once; a source it cannot get stops it."""
        if self.on_note is not None:
            if outcome.note:
                self.on_note(outcome.note)
            for copy_note in outcome.copy_notes:
                self.on_note(copy_note)
        if outcome.skill is None and not outcome.problems:
            raise SpecError(
                f"{self.document.path}: skills[{index}]: {outcome.note}",
                hint="Resolve it once with network access (`caliper run`) to fill the cache.",
            )


def _check_mcp(report: Reporter, value: object) -> tuple[McpServer, ...]:
    """The ``mcp:`` block's servers (:func:`caliper.spec.mcpspec.check_mcp`); the checker is
    imported only for a spec that has the block, as most have none."""
    if value is None:
        return ()
    from caliper.spec.mcpspec import check_mcp

    return check_mcp(report, value)


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def load_spec_for_run(
    path: Path, judges: Mapping[str, Judge], *, on_note: Callable[[str], None] | None = None
) -> tuple[Spec, list[ResolvedSkill]]:
    """The validated spec and its skills, resolved online and hashed once (for a run).

    Raises :class:`SpecInvalid` listing every problem, or :class:`SpecError` for a git source
    that can be neither fetched nor found in the cache.
    """
    result = check_spec(path, judges, online=True, on_note=on_note)
    if result.spec is None:
        raise SpecInvalid(result.problems)
    return result.spec, list(result.skills)


def load_spec(path: Path, judges: Mapping[str, Judge]) -> Spec:
    """The validated spec at ``path``; raises :class:`SpecInvalid` listing every problem."""
    result = check_spec(path, judges)
    if result.spec is None:
        raise SpecInvalid(result.problems)
    return result.spec
