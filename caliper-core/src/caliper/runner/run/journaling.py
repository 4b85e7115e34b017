"""A running run's journal, and assembling its results file from it at the end.

:class:`RunJournal` claims the run id by creating ``<run-id>.journal.jsonl`` (a resume
rewrites its own), appends each finished attempt the moment the scheduler reports it, in the
stored form the final file keeps (secrets redacted, text capped), and at the end assembles
the results file from the journal's attempts with the pure
:func:`caliper.runner.run.assemble.assemble_results`, saves it atomically (written piece by
piece) and removes the journal. See :mod:`caliper.results.journal` for the format.

The journal on disk is what survives the process (``--resume`` reads it); while the run goes
on it keeps, in memory, only each attempt's line as written (its stored form as JSON text,
compressed in blocks: :class:`PackedLines`), the last one of an attempt recorded twice, as
reading the journal back would. The finished attempts' records are not kept: the results are
assembled from those lines.

When the journal cannot be created (a store that is not writable is refused earlier, so this
is rare) the run goes on with the attempts kept in memory only, and says so once.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from caliper.errors import CaliperError, UsageError
from caliper.results import codec, runlock
from caliper.results.compact import StorageLimits
from caliper.results.journal import (
    JOURNAL_SUFFIX,
    JournalWriter,
    attempt_key,
    attempt_line,
    header,
    is_locked,
)
from caliper.results.models import AttemptRecord, Outcome, RunMeta, RunResults
from caliper.results.store import (
    RESULTS_DIR,
    ResultsWriteError,
    claim_journal,
    claim_results,
    new_run_id,
    rescue,
    save_assembled,
)
from caliper.runner.run.assemble import AssembledRun, assemble_results, task_entries
from caliper.runner.run.meta import build_meta, now_iso

BLOCK_LINES = 64
"""The attempt lines kept in memory are compressed this many at a time."""

if TYPE_CHECKING:
    from caliper.runner.attempt.judging import LazyEngine
    from caliper.runner.run.plan import RunPlan
    from caliper.runner.run.prepare import PreparedRun


class PackedLines(Sequence[str]):
    """Each attempt's stored form as its JSON line, by (task, attempt number), the last line
    of an attempt put twice winning (as :func:`caliper.results.journal.read_journal` keeps
    it); as a sequence, the lines in the order their attempts were first put.

    Held compressed (zlib) in blocks of :data:`BLOCK_LINES` lines, the newest block as it is:
    the lines of a run share their keys and most of their values, so a packed line keeps a
    small part of its size, and one compression call serves a block (a call lets the other
    threads run, and the scheduler's thread puts the lines). Reading a packed line unpacks its
    block (the last block unpacked is kept, as lines are mostly read in order).
    """

    def __init__(self) -> None:
        self._place: dict[tuple[str, int], int] = {}
        self._packed: list[bytes] = []
        self._newest: list[str] = []
        self._unpacked: tuple[int, list[str]] = (-1, [])

    def put(self, key: tuple[str, int], line: str) -> None:
        """Keep ``line`` as attempt ``key``'s (replacing one put before)."""
        place = self._place.setdefault(key, len(self))
        if place < len(self):
            self._replace(place, line)
            return
        self._newest.append(line)
        if len(self._newest) == BLOCK_LINES:
            self._packed.append(_pack(self._newest))
            self._newest = []

    def _replace(self, place: int, line: str) -> None:
        block, offset = divmod(place, BLOCK_LINES)
        if block == len(self._packed):
            self._newest[offset] = line
            return
        lines = self._block(block).copy()
        lines[offset] = line
        self._packed[block] = _pack(lines)
        self._unpacked = (-1, [])

    def _block(self, block: int) -> list[str]:
        if self._unpacked[0] != block:
            text = zlib.decompress(self._packed[block]).decode("utf-8")
            self._unpacked = (block, text.split("\n"))
        return self._unpacked[1]

    def __len__(self) -> int:
        return len(self._packed) * BLOCK_LINES + len(self._newest)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not 0 <= index < len(self):
            raise IndexError(index)
        block, offset = divmod(index, BLOCK_LINES)
        if block == len(self._packed):
            return self._newest[offset]
        return self._block(block)[offset]


def _pack(lines: list[str]) -> bytes:
    """``lines`` (JSON lines: no raw newline inside) compressed as one block."""
    return zlib.compress("\n".join(lines).encode("utf-8"), 1)


class RunJournal:
    """The journal of one run while it goes on (appends happen in the main thread)."""

    def __init__(
        self,
        prepared: PreparedRun,
        plan: RunPlan,
        *,
        judge_engine: LazyEngine,
        cli_version: Callable[..., str | None],
        notify: Callable[[str], None],
    ) -> None:
        self.prepared = prepared
        self.plan = plan
        self._judge_engine = judge_engine
        self._cli_version = cli_version
        self._notify = notify
        options = prepared.options
        self.limits = StorageLimits(options.max_turn_chars, options.max_attempt_chars)
        self._lines = PackedLines()
        for attempt in plan.carried:
            self._lines.put(attempt_key(attempt), codec.line(attempt))
        self.carried_records = [codec.attempt_from_data(a) for a in plan.carried]
        self._new_count = 0
        self._new_infra_errors = 0
        self.aborted_names: set[str] = set()
        self.writer: JournalWriter | None = None
        self.run_id: str | None = plan.run_id
        self._locked = False
        """Whether this process holds the run's journal lock (:mod:`caliper.results.runlock`)."""
        self.started_at = plan.started_at or now_iso()
        root = prepared.results_root
        assert root is not None, "prepare_run resolves the results folder"
        self.folder = root / RESULTS_DIR / prepared.spec.name
        self.output = options.output.absolute() if options.output is not None else None

    # -- the pieces of the results file -------------------------------------------------------
    def meta(self, records: Iterable[AttemptRecord], run_id: str, *, final: bool = True) -> RunMeta:
        """The run's metadata for ``records``, with what the plan and the flags add.

        The CLI version is probed in the background: the final metadata waits for it, the
        journal's header (written before the first attempt) takes it only if it is known.
        """
        options = self.prepared.options
        meta = build_meta(
            self.prepared,
            list(records),
            run_id=run_id,
            started_at=self.started_at,
            judge_engine=self._judge_engine,
            cli_version=self._cli_version(wait=final),
        )
        meta.requested_model = options.model
        meta.judge_requested = options.judge_model
        meta.retries = options.retries
        meta.timeouts = options.timeouts
        if options.adaptive is not None:
            meta.adaptive = options.adaptive.to_data()
        for key, value in self.plan.notes.items():
            setattr(meta, key, value)
        return meta

    def tasks_data(self) -> list[dict[str, Any]]:
        """Each task of the spec, without attempts, as the results file stores it."""
        return task_entries(self.prepared.spec, self.prepared.options.k)

    def _header(self, run_id: str) -> dict[str, Any]:
        meta = self.meta(self.carried_records, run_id, final=False)
        meta.finished_at = None  # a killed run never finished
        return header(codec.converter().unstructure(meta), self.tasks_data())

    # -- while the run goes on ----------------------------------------------------------------
    def open(self) -> None:
        """Create (or, for a resume, rewrite) the journal before the first attempt."""
        if self.run_id is not None:  # a resume keeps its id and its journal's place
            path = self.folder / f"{self.run_id}{JOURNAL_SUFFIX}"
            try:
                taken = runlock.acquire(self.folder, self.run_id)  # held since it was read
            except OSError:
                taken = True  # the journal's own write below reports an unwritable folder
            if not taken or is_locked(path):
                if taken:
                    runlock.release(self.folder, self.run_id)
                raise UsageError(
                    f"Run {self.prepared.spec.name}/{self.run_id} is still running "
                    "(another caliper process holds its journal).",
                    hint="Wait for it to finish, or stop it first.",
                )
            lines = [self._header(self.run_id), *({"attempt": a} for a in self.plan.carried)]
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                self.writer = JournalWriter.replace(path, lines)
            except OSError as exc:
                raise ResultsWriteError(
                    f"Could not write the journal {path}: {exc.strerror or exc}.",
                    hint="Free some space or fix the folder's permissions, then resume again.",
                ) from exc
            self._locked = True
            return
        try:
            self.writer, self.run_id = claim_journal(self.folder, new_run_id(), self._header)
            try:  # a new id: nobody else can hold its lock, only a resume can ask for it
                self._locked = runlock.acquire(self.folder, self.run_id)
            except OSError:
                self._locked = False
            for attempt in self.plan.carried:  # a retry copies its parent's other attempts
                self.writer.append({"attempt": attempt})
        except (OSError, CaliperError) as exc:
            self.run_id = new_run_id()
            self._notify(
                f"Warning: could not create the run's journal in {self.folder} ({exc}); "
                "finished attempts are kept in memory only until the run is saved."
            )

    def record(self, record: AttemptRecord) -> None:
        """Journal one finished attempt (its earlier tries from the plan put in front)."""
        history = self.plan.history.get((record.task_name, record.attempt))
        if history:
            record.tries = [*history, *record.tries]
        data = codec.attempt_data(record, self.limits)
        line = codec.line(data)
        self._lines.put(attempt_key(data), line)
        self._new_count += 1
        self._new_infra_errors += record.outcome is Outcome.INFRA_ERROR
        self._append_line(attempt_line(line))

    def aborted(self, task_name: str) -> None:
        """Journal that ``--fail-fast`` stopped a task."""
        self.aborted_names.add(task_name)
        self._append({"event": "aborted", "task": task_name})

    def _append(self, item: dict[str, Any]) -> None:
        self._append_line(codec.line(item))

    def _append_line(self, line: str) -> None:
        if self.writer is None:
            return
        try:
            self.writer.append_line(line)
        except OSError as exc:
            self._notify(
                f"Warning: writing the run's journal {self.writer.path} failed "
                f"({exc.strerror or exc}); the rest of the run is kept in memory only."
            )
            self.writer.close()
            self.writer = None

    def close(self) -> None:
        """Release the journal (it stays on disk unless the run was saved)."""
        if self.writer is not None:
            self.writer.close()
        if self._locked and self.run_id is not None:
            runlock.release(self.folder, self.run_id)
            self._locked = False

    # -- at the end ---------------------------------------------------------------------------
    def never_started(self) -> bool:
        """Whether no attempt of this session got past the agent's start: it made some, and
        each ended as an infrastructure error (the agent's setup failed), none carried over
        from an earlier run (a resume or retry keeps what it brought)."""
        return (
            not self.carried_records
            and self._new_count > 0
            and self._new_infra_errors == self._new_count
        )

    def discard(self) -> None:
        """Remove the journal: the run is not kept (nothing in it was measured)."""
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError):
                self.writer.path.unlink()
            with contextlib.suppress(OSError):
                self.folder.rmdir()  # only when this run was all it held
            self.writer = None

    def finish(
        self,
        *,
        aborted: Iterable[str],
        stop_reason: str | None,
        task_stop_reasons: dict[str, str] | None = None,
        save: bool = True,
    ) -> tuple[RunResults, Path | None, CaliperError | None]:
        """Assemble the results file from the journal's attempts, save it; return results,
        where they went and the save error (if saving failed). With ``save=False`` the results
        are only assembled and the journal is removed."""
        assert self.run_id is not None
        aborted = {*aborted, *self.aborted_names}
        if not save:
            self.discard()
            assembled = self._assemble(aborted, stop_reason, task_stop_reasons, partial=True)
            return assembled.results, None, None
        journal = self.writer.path if self.writer is not None else None
        claim_error: ResultsWriteError | None = None
        path: Path | None = self.folder / f"{self.run_id}.json"
        if journal is None:  # no journal claimed the id: claim a results file now
            try:
                path, self.run_id = claim_results(self.folder, self.run_id)
            except ResultsWriteError as exc:
                claim_error, path = exc, None
        assembled = self._assemble(
            aborted, stop_reason, task_stop_reasons, partial=stop_reason is not None
        )
        text, results = assembled.text, assembled.results
        if path is None:
            assert claim_error is not None
            return results, None, rescue(results, claim_error, self.output, text=text)
        try:
            saved = save_assembled(text, results, path=path, output=self.output, journal=journal)
        except ResultsWriteError as exc:
            if journal is None and not _has_content(path):
                path.unlink(missing_ok=True)  # give the claimed name back
            return results, None, exc
        return results, saved, None

    def _assemble(
        self,
        aborted: set[str],
        stop_reason: str | None,
        task_stop_reasons: dict[str, str] | None,
        *,
        partial: bool,
    ) -> AssembledRun:
        """The results file of the attempts journaled, with the final metadata."""
        run_id = self.run_id
        assert run_id is not None

        def meta_for(records: list[AttemptRecord]) -> RunMeta:
            meta = self.meta(records, run_id)
            if partial:
                meta.partial, meta.stop_reason = True, stop_reason
            return meta

        return assemble_results(
            meta_for,
            self.prepared.spec,
            self.prepared.options.k,
            self._lines,
            aborted=aborted,
            task_stop_reasons=task_stop_reasons,
        )


def _has_content(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False
