"""Building the saved run's metadata: who ran it, with what, and on which neighbourhood."""

from __future__ import annotations

import collections
import datetime
from collections.abc import Iterable
from typing import TYPE_CHECKING

from caliper import __version__
from caliper.host.plugins import GROUPS, installed
from caliper.results.store import new_run_id as store_run_id

if TYPE_CHECKING:
    from caliper.results.models import AttemptRecord, RunMeta, SkillSnapshot
    from caliper.runner.attempt.judging import LazyEngine
    from caliper.runner.run.prepare import PreparedRun


def now_iso() -> str:
    """The current UTC time as ISO 8601 (seconds precision)."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def new_run_id() -> str:
    """A run id in the store's format (the store makes it unique when it saves)."""
    return store_run_id()


def spec_hash(prepared: PreparedRun) -> str:
    """SHA-256 of the spec file's bytes as read to load it (never read again)."""
    return prepared.spec_sha256


def plugin_versions() -> dict[str, str]:
    """Installed plugin distributions and their versions (metadata only, nothing imported)."""
    versions: dict[str, str] = {}
    for group in GROUPS:
        for entry in installed(group):
            if entry.distribution and entry.version:
                versions[entry.distribution] = entry.version
    return dict(sorted(versions.items()))


def skill_snapshots(prepared: PreparedRun) -> list[SkillSnapshot]:
    """One snapshot per declared skill, with its ablated flag."""
    from caliper.results.models import SkillSnapshot

    ablated = set(prepared.ablation.skills)
    return [
        SkillSnapshot(
            name=skill.name,
            source_kind=skill.source_kind,
            declared_as=skill.declared_as,
            path=str(skill.source_dir) if skill.source_kind == "path" else None,
            git_repo=skill.git_repo,
            git_ref=skill.git_ref,
            git_sha=skill.git_sha,
            content_hash=skill.content_hash,
            description=skill.description,
            ablated=skill.name in ablated,
        )
        for skill in prepared.skills
    ]


def _most_common(values: Iterable[str | None]) -> str | None:
    counts = collections.Counter(v for v in values if v)
    return counts.most_common(1)[0][0] if counts else None


def _judge_details(
    records: Iterable[AttemptRecord], prepared: PreparedRun
) -> tuple[str | None, str | None, str | None]:
    backends, models, versions = [], [], []
    for record in records:
        for check in record.checks:
            judge = prepared.judges.get(check.key)
            if judge is None or not judge.uses_llm or check.details.get("not_run"):
                continue
            backends.append(check.backend)
            models.append(check.model)
            versions.append(check.prompt_version)
    return _most_common(backends), _most_common(models), _most_common(versions)


def user_setup_union(records: Iterable[AttemptRecord]) -> dict[str, list[str]]:
    """Every name loaded from the user's setup, per kind, in first-seen order."""
    union: dict[str, list[str]] = {}
    for record in records:
        for kind, names in (record.user_setup or {}).items():
            kept = union.setdefault(kind, [])
            kept += [name for name in names if name not in kept]
    return union


def build_meta(
    prepared: PreparedRun,
    records: list[AttemptRecord],
    *,
    run_id: str,
    started_at: str,
    judge_engine: LazyEngine,
    cli_version: str | None,
) -> RunMeta:
    """The run's :class:`RunMeta` from the prepared run and the finished attempts."""
    from caliper.results.models import RunMeta

    options = prepared.options
    engine = prepared.engine
    judge_backend, judge_model, prompt_version = _judge_details(records, prepared)
    if judge_engine.engine is not None:
        judge_backend = judge_backend or judge_engine.engine.backend_id
        judge_model = judge_model or judge_engine.engine.model
    return RunMeta(
        run_id=run_id,
        spec_name=prepared.spec.name,
        spec_path=str(prepared.spec.path),
        started_at=started_at,
        finished_at=now_iso(),
        backend=engine.backend_id,
        model=_most_common(r.model for r in records)
        or engine.model
        or engine.backend.default_model,
        judge_backend=judge_backend,
        judge_model=judge_model,
        judge_prompt_version=prompt_version,
        caliper_version=__version__,
        plugin_versions=plugin_versions(),
        cli_version=cli_version,
        k=options.k,
        timeout=options.timeout,
        workers=options.workers,
        ablated=list(prepared.ablation.skills),
        ablated_mcp=list(prepared.ablation.mcp),
        user_customizations=prepared.user_customizations,
        user_setup=user_setup_union(records),
        skill_snapshots=skill_snapshots(prepared),
        spec_hash=spec_hash(prepared),
    )
