"""Turn a spec's ``skills:`` sources into skill folders on disk (:class:`ResolvedSkill`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from caliper.errors import SpecError
from caliper.plugin.skills import ResolvedSkill
from caliper.spec.frontmatter import FrontmatterCheck, check_skill_file
from caliper.spec.model import SkillSource, Spec
from caliper.spec.problems import Problem, SpecInvalid
from caliper.system import attrs_classes
from caliper.system.skill_tree import (
    SkillTree,
    content_hash,
    max_skill_bytes,
    real_root,
    scan,
    source_root_for,
    tree_hash,
)

if TYPE_CHECKING:
    from caliper.spec.gitcache import GitCache

SKILL_FILE = "SKILL.md"
__all__ = ["content_hash", "resolve_skills", "resolve_source"]


@attrs_classes.frozen
class InstallSummary:
    """What an attempt gets of one skill's folder: how many files, their total size, and
    (when asked for) their paths relative to the folder."""

    name: str
    files: int
    bytes: int
    paths: tuple[str, ...] = ()


@attrs_classes.frozen
class SourceOutcome:
    """What resolving one source gave: the skill, or problems, or a note (not checked)."""

    source: SkillSource
    index: int
    skill: ResolvedSkill | None = None
    problems: tuple[Problem, ...] = ()
    warnings: tuple[Problem, ...] = ()
    note: str | None = None
    copy_notes: tuple[str, ...] = ()
    """What installing the skill leaves out (links, special files), rendered for the run."""
    installed: InstallSummary | None = None


def _skill_file_for(target: Path) -> tuple[Path | None, str | None]:
    """The ``SKILL.md`` a source names (a folder or the file itself), or why it names none."""
    if target.is_dir():
        candidate = target / SKILL_FILE
        if candidate.is_file():
            return candidate, None
        return None, f"the folder {target} holds no {SKILL_FILE}"
    if target.is_file():
        if target.name != SKILL_FILE:
            return None, (
                f"{target.name} is not a {SKILL_FILE}; a skill is a folder with a {SKILL_FILE} "
                "whose frontmatter has `name:` and `description:`"
            )
        return target, None
    return None, f"{target} does not exist"


def _spec_problem(
    spec_path: Path, source: SkillSource, index: int, message: str, column: int | None = None
) -> Problem:
    return Problem(
        spec_path, source.line, column if source.line else None, f"skills[{index}]", message
    )


def resolve_source(
    source: SkillSource,
    index: int,
    spec_path: Path,
    *,
    cache: GitCache | Callable[[], GitCache],
    offline: bool,
    column: int | None = None,
    hash_content: bool = True,
    list_files: bool = False,
) -> SourceOutcome:
    """Resolve one source. Offline, an uncached git source yields a note, not a problem.

    ``cache`` is the git cache, or what makes it (called for a git source only, so a spec
    of local skills never imports the git machinery).

    Without ``hash_content`` the skill's ``content_hash`` is ``None`` (its files are not read)
    and its scan is not kept on the skill; ``list_files`` keeps the installed paths in
    :attr:`SourceOutcome.installed`."""
    resolution = _Resolution(source, index, spec_path, column)
    if source.kind == "git":
        found = resolution.locate_git(cache, offline)
    else:
        found = resolution.locate_local()
    if isinstance(found, SourceOutcome):
        return found
    return resolution.from_skill_file(found, hash_content=hash_content, list_files=list_files)


class _Resolution:
    """Resolving one skill source for :func:`resolve_source`: where the spec declares it, and
    what has been learned of it so far (the git checkout and its note, for a git source)."""

    def __init__(
        self, source: SkillSource, index: int, spec_path: Path, column: int | None
    ) -> None:
        """Start resolving ``source``, the ``index``-th entry of ``skills:`` in ``spec_path``."""
        self.source = source
        self.index = index
        self.spec_path = spec_path
        self.column = column
        self.spec_dir = spec_path.parent
        self.note: str | None = None
        self.repo_root: Path | None = None
        self.git_repo: str | None = None
        self.git_ref: str | None = None
        self.git_sha: str | None = None

    def failed(self, message: str) -> SourceOutcome:
        """The outcome of a source that cannot be used, with ``message`` as its problem."""
        problem = _spec_problem(self.spec_path, self.source, self.index, message, self.column)
        return SourceOutcome(self.source, self.index, problems=(problem,), note=self.note)

    def locate_git(
        self, cache: GitCache | Callable[[], GitCache], offline: bool
    ) -> Path | SourceOutcome:
        """Check out a git source and find the ``SKILL.md`` it names, or the outcome saying
        why there is none (a note when offline and not cached)."""
        from caliper.spec.gitcache import GitCache, GitSourceError, NotCached, clone_url

        source = self.source
        assert source.repo is not None
        if not isinstance(cache, GitCache):
            cache = cache()
        url = clone_url(source.repo, self.spec_dir)
        try:
            checkout = cache.resolve(url, source.ref, offline=offline, shown_as=source.repo)
        except NotCached as exc:
            return SourceOutcome(source, self.index, note=str(exc))
        except GitSourceError as exc:
            return self.failed(exc.render())
        self.note = checkout.note
        self.repo_root = checkout.directory
        self.git_repo, self.git_ref, self.git_sha = source.repo, source.ref, checkout.sha
        inside = source.path or SKILL_FILE
        target = checkout.directory / inside
        skill_file, why = _skill_file_for(target)
        if skill_file is None:
            where = f"{source.repo} at {checkout.sha[:12]}"
            return self.failed(
                f"path {inside!r} in {where}: "
                + (
                    "does not exist"
                    if not target.exists()
                    else str(why).replace(str(target), inside)
                )
            )
        return skill_file

    def locate_local(self) -> Path | SourceOutcome:
        """Find the ``SKILL.md`` a local source names, or the outcome saying why there is
        none."""
        path = self.source.path
        assert path is not None
        target = self.spec_dir / Path(path).expanduser()
        skill_file, why = _skill_file_for(target)
        if skill_file is not None:
            return skill_file
        message = str(why)
        if not target.exists():
            message = f"{path} does not exist (paths are relative to the spec's folder)"
            if "/" in path and not path.startswith((".", "/", "~")):
                message += f"; for a git repository write `- repo: {path}`"
        return self.failed(message)

    def from_skill_file(
        self, skill_file: Path, *, hash_content: bool, list_files: bool
    ) -> SourceOutcome:
        """Check ``skill_file`` and scan its folder; the outcome is the resolved skill, or
        the problems that stop its use."""
        checked = check_skill_file(skill_file)
        if checked.frontmatter is None:
            return SourceOutcome(
                self.source,
                self.index,
                problems=tuple(checked.problems),
                warnings=tuple(checked.warnings),
                note=self.note,
            )
        folder = skill_file.parent
        root = (
            self.repo_root if self.repo_root is not None else source_root_for(folder, self.spec_dir)
        )
        source_dir, source_root = folder.resolve(), Path(real_root(str(root)))
        try:
            tree = scan(source_dir, max_bytes=max_skill_bytes(), source_root=source_root)
            digest = tree_hash(tree) if tree.fatal is None and hash_content else None
        except ValueError as exc:  # an unreadable CALIPER_SKILL_MAX_BYTES
            return self.failed(str(exc))
        except OSError as exc:
            return self.failed(f"cannot read the skill folder {folder}: {exc}")
        fatal = tree.fatal_text()
        if fatal is not None:
            return self.failed(fatal)
        skill = ResolvedSkill(
            name=checked.frontmatter.name,
            description=checked.frontmatter.description,
            source_dir=source_dir,
            source_kind=self.source.kind,
            declared_as=self.source.declared_as,
            git_repo=self.git_repo,
            git_ref=self.git_ref,
            git_sha=self.git_sha,
            content_hash=digest,
            model_invocable=checked.frontmatter.model_invocable,
            tree=tree if hash_content else None,
            source_root=source_root,
        )
        return self.resolved(skill, checked, tree, folder, list_files=list_files)

    def resolved(
        self,
        skill: ResolvedSkill,
        checked: FrontmatterCheck,
        tree: SkillTree,
        folder: Path,
        *,
        list_files: bool,
    ) -> SourceOutcome:
        """The outcome of a usable ``skill``: its warnings, what installing it leaves out and
        a summary of what it installs."""
        # At a repository's root the folder is named after the commit: no name to compare.
        warnings = tuple(checked.warnings) if folder != self.repo_root else ()
        left_out = tuple(
            Problem(i.path, None, None, "", i.message) for i in tree.issues if i.kind != "output"
        )
        if self.repo_root is not None:
            left_out += _left_out_warnings(
                self.spec_path, self.source, self.index, self.column, self.repo_root, folder
            )
        paths = tuple(f.relative for f in tree.files) if list_files else ()
        return SourceOutcome(
            self.source,
            self.index,
            skill=skill,
            warnings=warnings + left_out + nested_skill_warnings(tree),
            note=self.note,
            copy_notes=tuple(p.render() for p in left_out),
            installed=InstallSummary(skill.name, len(tree.files), tree.total_bytes, paths),
        )


def _left_out_warnings(
    spec_path: Path, source: SkillSource, index: int, column: int | None, root: Path, folder: Path
) -> tuple[Problem, ...]:
    """Links of the skill's repository folder that were not unpacked (they leave the repo;
    their targets never reach the checkout, so there is nothing to refuse)."""
    from caliper.spec.gitcache import GitCache

    inside = folder.relative_to(root).as_posix() if folder != root else ""
    found = []
    for link in GitCache.left_out_links(root):
        path = str(link.get("path", "")).removeprefix("./")
        if inside and not path.startswith(inside + "/"):
            continue
        message = (
            f"{path} in {source.repo} is a link to {link.get('target')}, outside the "
            "repository; it was left out (commit the file itself instead of a link)"
        )
        found.append(_spec_problem(spec_path, source, index, message, column))
    return tuple(found)


def nested_skill_warnings(tree: SkillTree) -> tuple[Problem, ...]:
    """One warning per ``SKILL.md`` nested inside the skill folder, at its path."""
    found = []
    for relative in tree.nested_skill_files:
        found.append(
            Problem(
                tree.root / relative,
                None,
                None,
                "",
                "a SKILL.md inside another skill's folder is not a separate skill: caliper "
                "installs it as one of that skill's files and hides it from the agent's skill "
                "list; declare it in `skills:` if the agent should choose it on its own",
            )
        )
    return tuple(found)


def duplicate_names(outcomes: Iterable[SourceOutcome]) -> list[tuple[int, str]]:
    """``(index, message)`` for each source whose skill name an earlier source already has."""
    seen: dict[str, int] = {}
    found = []
    for outcome in outcomes:
        if outcome.skill is None:
            continue
        name = outcome.skill.name
        if name in seen:
            found.append(
                (
                    outcome.index,
                    (
                        f"skill name {name!r} is already declared by skills[{seen[name]}]; "
                        "every skill in the neighbourhood needs its own frontmatter name"
                    ),
                )
            )
        else:
            seen[name] = outcome.index
    return found


def resolve_skills(
    spec: Spec,
    *,
    offline: bool = False,
    cache_dir: Path | None = None,
    on_note: Callable[[str], None] | None = None,
) -> list[ResolvedSkill]:
    """Every declared skill, resolved to a folder, in declaration order.

    Git sources are fetched into the cache (``cache_dir``, default :func:`cache_root`); with
    ``offline`` only the cache is used. ``on_note`` receives remarks such as "remote
    unreachable, used the cached commit" and the links or special files a copy leaves out.
    Raises :class:`SpecInvalid` (a ``SpecError``) with file and line for a missing path, a bad
    ``SKILL.md``, two skills with one name, or an ``activates:`` entry naming no resolved
    skill; :class:`GitSourceError` for fetch failures. (An entry naming a model-hidden skill
    is refused by a run only for a backend that hides such skills.)
    """
    from caliper.spec.gitcache import GitCache

    cache = GitCache(cache_dir)
    outcomes = []
    for index, source in enumerate(spec.skills):
        outcome = resolve_source(source, index, spec.path, cache=cache, offline=offline)
        if outcome.note and on_note is not None:
            on_note(outcome.note)
        for copy_note in outcome.copy_notes if on_note is not None else ():
            on_note(copy_note)
        if outcome.skill is None and not outcome.problems:
            raise SpecError(
                f"{spec.path}: skills[{index}]: {outcome.note}",
                hint="Resolve it once with network access (`caliper run`) to fill the cache.",
            )
        outcomes.append(outcome)
    problems = [p for outcome in outcomes for p in outcome.problems]
    problems += [
        _spec_problem(spec.path, spec.skills[index], index, message)
        for index, message in duplicate_names(outcomes)
    ]
    skills = [outcome.skill for outcome in outcomes if outcome.skill is not None]
    if not problems:
        problems += activation_name_problems(spec, {s.name for s in skills})
    if problems:
        raise SpecInvalid(problems)
    return skills


def activation_name_problems(spec: Spec, names: set[str]) -> list[Problem]:
    """``activates:`` entries naming no resolved skill (checked again once git sources load)."""
    problems = []
    for task in spec.tasks:
        for position, name in enumerate(task.activates or ()):
            if name not in names:
                declared = ", ".join(sorted(names)) or "none"
                problems.append(
                    Problem(
                        spec.path,
                        task.line,
                        None,
                        f"tasks[{task.index}].{task.activation_key}[{position}]",
                        f"{name!r} is not the name of a declared skill (declared: {declared})",
                    )
                )
    return problems


HIDDEN_REASON = (
    "{name!r} cannot be activated with {agent}: its SKILL.md ({file}) says "
    "`disable-model-invocation: true`, which {agent} honours by hiding the skill from the "
    "model, so this check could never pass; remove that line from the skill, the name from "
    "`activates:`, or run with an agent that lists such skills"
)
HIDDEN_WARNING = (
    "{name!r} says `disable-model-invocation: true` in its SKILL.md ({file}): agents that "
    "honour that field (Claude Code and pi today; see docs/backends) hide the skill from the "
    "model, so with them this check can never pass and `caliper run` refuses the spec; "
    "agents that ignore it list the skill as usual"
)


def hidden_skill_message(skill: ResolvedSkill, agent: str | None = None) -> str:
    """Why an ``activates:`` entry naming a model-hidden skill is refused with ``agent`` (a
    backend that hides such skills), or, without ``agent``, the warning ``validate`` gives."""
    file = skill.source_dir / SKILL_FILE
    if agent is None:
        return HIDDEN_WARNING.format(name=skill.name, file=file)
    return HIDDEN_REASON.format(name=skill.name, file=file, agent=agent)


def hidden_activation_entries(
    tasks: object, skills: Iterable[ResolvedSkill], keys: Iterable[str]
) -> list[tuple[tuple[object, ...], str]]:
    """``(field path, warning)`` for every ``activates:`` entry naming a model-hidden skill.

    ``tasks`` is the raw ``tasks:`` value of the spec (a list of mappings when valid);
    ``keys`` the task keys of the installed judges that declare ``scores_activation``.
    """
    hidden = {skill.name: skill for skill in skills if not skill.model_invocable}
    found: list[tuple[tuple[object, ...], str]] = []
    if not hidden or not isinstance(tasks, list):
        return found
    for index, task in enumerate(tasks):
        for key in keys:
            names = task.get(key) if isinstance(task, dict) else None
            if not isinstance(names, list):
                continue
            for position, name in enumerate(names):
                if isinstance(name, str) and name in hidden:
                    path = ("tasks", index, key, position)
                    found.append((path, hidden_skill_message(hidden[name])))
    return found


def hidden_activation_problems(
    spec: Spec, skills: Iterable[ResolvedSkill], agent: str = "this agent"
) -> list[Problem]:
    """``activates:`` entries naming a model-hidden skill, as problems: for a run whose
    backend (``agent``) hides such skills (its ``hides_model_disabled_skills``)."""
    hidden = {skill.name: skill for skill in skills if not skill.model_invocable}
    problems = []
    for task in spec.tasks:
        for position, name in enumerate(task.activates or ()):
            if name in hidden:
                problems.append(
                    Problem(
                        spec.path,
                        task.line,
                        None,
                        f"tasks[{task.index}].{task.activation_key}[{position}]",
                        hidden_skill_message(hidden[name], agent),
                    )
                )
    return problems
