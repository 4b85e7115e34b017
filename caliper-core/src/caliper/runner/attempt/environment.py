"""One attempt's environment: its sandbox and the steps that make it ready for the agent.

An :class:`AttemptEnvironment` has one method per step, each run at most once and remembered:
:meth:`~AttemptEnvironment.sandbox` (the fresh attempt sandbox),
:meth:`~AttemptEnvironment.installed_skills` (the skill install and the MCP translation),
:meth:`~AttemptEnvironment.seeded_home` (the backend's HOME seeding) and
:meth:`~AttemptEnvironment.judge_box` (a judge call's sandbox inside the attempt's). The
attempt pipeline calls the steps it needs in order; a step already done (because the
environment was made ahead, see :mod:`caliper.runner.attempt.preparation`) returns what it
gave then. :meth:`~AttemptEnvironment.cleanup` removes whatever sandbox was made.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from caliper.plugin.attempt import SeededHome
from caliper.plugin.sandbox import make_sandbox, remove_sandbox
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.plugin.attempt import AttemptSandbox, InstalledSkill, NativeMcpConfig
    from caliper.plugin.backend import Backend
    from caliper.runner.run.prepare import PreparedRun

Fingerprint = tuple[tuple[str, int, int, int, int, int], ...]


def new_sandbox(prepared: PreparedRun, parent: AttemptSandbox | None = None) -> AttemptSandbox:
    """A fresh attempt sandbox of ``prepared``'s run, or a judge call's nested in ``parent``."""
    return make_sandbox(
        spec_dir=prepared.spec.directory,
        extra_path=prepared.spec.sandbox.extra_path,
        parent=parent.root if parent else prepared.sandbox_parent,
        prefix="judge-" if parent else "caliper-attempt-",
    )


def seed_ahead(backend: Backend, sandbox: AttemptSandbox) -> AttemptSandbox:
    """``sandbox`` with ``backend``'s HOME seeding done (:meth:`Backend.prepare_home`)."""
    state = backend.prepare_home(sandbox)
    return attrs.evolve(sandbox, seeded=SeededHome(backend.id, state))


def fingerprint(root: Path) -> Fingerprint:
    """Every entry under ``root`` (and ``root`` itself) with its inode, mode, size and change
    time: any file written, added, removed or replaced below changes it."""
    entries: list[tuple[str, int, int, int, int, int]] = []

    def note(path: str, st: os.stat_result) -> None:
        entries.append((path, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns))

    note(str(root), os.lstat(root))
    pending = [str(root)]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as listing:
            for entry in listing:
                note(entry.path, entry.stat(follow_symlinks=False))
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
    return tuple(sorted(entries))


@attrs_classes.define
class ReadyJudge:
    """A judge call's sandbox made ahead, and what it looked like once made."""

    sandbox: AttemptSandbox
    made: Fingerprint

    def untouched(self) -> bool:
        """Whether nothing in it changed since it was made (the agent ran beside it)."""
        try:
            return fingerprint(self.sandbox.root) == self.made
        except OSError:
            return False


@attrs_classes.define
class Installed:
    """What the skill install and the MCP translation gave one sandbox (``failure``: why
    preparing it failed, recorded as the attempt's infra error)."""

    skills: list[InstalledSkill] = attrs.field(factory=list)
    native_mcp: NativeMcpConfig | None = None
    failure: str | None = None


def install_into(prepared: PreparedRun, sandbox: AttemptSandbox) -> Installed:
    """Install the run's skills and translate its MCP servers into ``sandbox``; a plugin
    that raises is a failure reason, not an exception."""
    try:
        skills = (
            prepared.installer.install(prepared.installed_skills, sandbox)
            if prepared.installer is not None and prepared.installed_skills
            else []
        )
        native_mcp = (
            prepared.translator.translate(prepared.mcp.servers, sandbox)
            if prepared.translator is not None and prepared.mcp.servers
            else None
        )
    except Exception as exc:  # a plugin failing to prepare the sandbox is a harness error
        return Installed(failure=f"preparing the sandbox failed: {type(exc).__name__}: {exc}")
    return Installed(skills=list(skills), native_mcp=native_mcp)


@contextlib.contextmanager
def judge_sandbox(
    prepared: PreparedRun, attempt: AttemptSandbox, ready: list[ReadyJudge]
) -> Iterator[AttemptSandbox]:
    """A sandbox for one judge call, removed after: the one made ahead (``ready``, taken
    once) when nothing in it changed, else a fresh one nested in the attempt's root."""
    sandbox = None
    if ready:
        made = ready.pop()
        if made.untouched():
            sandbox = made.sandbox
        else:
            remove_sandbox(made.sandbox, later=True)
    if sandbox is None:
        sandbox = new_sandbox(prepared, parent=attempt)
    try:
        yield sandbox
    finally:
        remove_sandbox(sandbox, later=True)


class AttemptEnvironment:
    """One attempt's sandbox and the steps preparing it, each run at most once.

    Every step remembers what it gave and returns that when called again, so an environment
    made ahead (its first steps done on another thread) and a fresh one go through the same
    calls. Not thread-safe: one thread uses it at a time (the preparer's, then the worker's).
    """

    def __init__(self, prepared: PreparedRun) -> None:
        self._prepared = prepared
        self._sandbox: AttemptSandbox | None = None
        self._installed: Installed | None = None
        self._seeded = False
        self._judges: list[ReadyJudge] = []
        self._judge_made = False
        self._removed = False

    def sandbox(self) -> AttemptSandbox:
        """The attempt's sandbox, made on the first call; once :meth:`seeded_home` ran, the
        one carrying the backend's seeding (:attr:`AttemptSandbox.seeded`)."""
        if self._sandbox is None:
            self._sandbox = new_sandbox(self._prepared)
        return self._sandbox

    def installed_skills(self) -> Installed:
        """The run's skills installed and its MCP servers translated into :meth:`sandbox`
        (:func:`install_into`: a plugin's failure is the result's ``failure``)."""
        if self._installed is None:
            self._installed = install_into(self._prepared, self.sandbox())
        return self._installed

    def seeded_home(self) -> AttemptSandbox:
        """:meth:`sandbox` with the run's backend's HOME seeding done
        (:meth:`~caliper.plugin.backend.Backend.prepare_home`). When this step never ran the
        backend seeds the HOME itself as the agent starts (``Backend.seeded_home``)."""
        if not self._seeded:
            self._sandbox = seed_ahead(self._prepared.engine.backend, self.sandbox())
            self._seeded = True
        return self.sandbox()

    def judge_box(self, backend: Backend | None) -> None:
        """Make a judge call's sandbox inside :meth:`sandbox` now (seeded by ``backend``, the
        judge engine's, when known), for the attempt's first judge call to take when nothing
        in it changed meanwhile (see :meth:`judge_sandbox`)."""
        if self._judge_made:
            return
        box = new_sandbox(self._prepared, parent=self.sandbox())
        self._judge_made = True
        if backend is not None:
            box = seed_ahead(backend, box)
        self._judges.append(ReadyJudge(box, fingerprint(box.root)))

    def judge_sandbox(self) -> contextlib.AbstractContextManager[AttemptSandbox]:
        """A sandbox for one judge call, removed after: the one :meth:`judge_box` made (the
        first call only) when nothing in it changed, else a fresh one in :meth:`sandbox`."""
        return judge_sandbox(self._prepared, self.sandbox(), self._judges)

    def prepare_ahead(
        self, *, install: bool, judge_backend: Backend | None, with_judge: bool
    ) -> AttemptEnvironment:
        """Run the first steps now (for an attempt that starts later) and return ``self``:
        the sandbox; with ``install`` the install and, when it succeeded, the HOME seeding;
        with ``with_judge`` a judge call's sandbox (:meth:`judge_box`). A step that raises
        removes what was made and the error propagates."""
        try:
            self.sandbox()
            if install and self.installed_skills().failure is None:
                self.seeded_home()
            if with_judge:
                self.judge_box(judge_backend)
        except BaseException:
            self.cleanup()
            raise
        return self

    def cleanup(self) -> None:
        """Remove the sandbox made (in the background, with the judge sandboxes nested in it);
        nothing when none was made, and nothing on a second call."""
        if self._sandbox is None or self._removed:
            return
        self._removed = True
        remove_sandbox(self._sandbox, later=True)
