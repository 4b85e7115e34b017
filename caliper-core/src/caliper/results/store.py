"""Where saved runs live, and how they are written, found and read.

One JSON file per run at ``<root>/results/<spec-name>/<run-id>.json``. ``<root>`` is the
nearest ``.caliper/`` directory at or above the current directory, else a ``.caliper/`` beside
the spec (created on first save). ``run``, ``list``, ``report`` and ``compare`` all use that
rule, so they agree whatever directory they are started from.

Run ids are UTC timestamps (``2026-11-30T18-01-33Z``); a second run in the same second gets
``-2``, ``-3``… The name is claimed with an exclusive create, then the content is written to a
temporary file in the same directory, flushed to disk and renamed over it, so a reader never
sees half a file and a failed write leaves nothing behind.

The ``--output`` copy goes through :func:`write_export`: a symlink is followed (the link
stays, its target file is written atomically), a character device or FIFO (``/dev/null``,
``/dev/stdout``, a named pipe) is written directly and never replaced, anything else that is
not a regular file is refused.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import re
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caliper.errors import CaliperError
from caliper.spec.names import spec_name_for
from caliper.system import attrs_classes
from caliper.system.os_errors import describe_os_error

if TYPE_CHECKING:
    from caliper.results.compact import StorageLimits
    from caliper.results.models import RunResults
    from caliper.system.output_file import OutputWriteError

ROOT_DIR = ".caliper"
RESULTS_DIR = "results"
MAX_SAME_SECOND = 1000
Text = str | Iterable[str]
"""A results file's text: whole, or pieces of it made as they are written (iterable again for
each copy written)."""
RUN_ID_RE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ)(?:-(\d+))?$")
SPEC_SUFFIXES = (".eval.yaml", ".eval.yml", ".yaml", ".yml")


class ResultsError(CaliperError):
    """A saved run cannot be found or read (exit 2: the command cannot do what was asked)."""

    exit_code = 2


class ResultsWriteError(CaliperError):
    """A run could not be saved (disk full, no permission, a file where a folder should be)."""


@attrs_classes.frozen
class RunEntry:
    """One saved run as the store lists it (nothing read from the file yet)."""

    spec_name: str
    run_id: str
    path: Path
    incomplete: bool = False
    """True when the entry is a journal with no (newer) final results file: a killed run."""


def new_run_id(when: datetime.datetime | None = None) -> str:
    """A run id for ``when`` (default: now), as a UTC timestamp with seconds precision."""
    when = when or datetime.datetime.now(datetime.timezone.utc)
    if when.tzinfo is not None:
        when = when.astimezone(datetime.timezone.utc)
    return when.strftime("%Y-%m-%dT%H-%M-%SZ")


def _base_run_id(results: RunResults) -> str:
    match = RUN_ID_RE.match(results.meta.run_id or "")
    if match:
        return match.group(1)
    try:
        started = datetime.datetime.fromisoformat(results.meta.started_at.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return new_run_id()
    if started.tzinfo is None:
        started = started.replace(tzinfo=datetime.timezone.utc)
    return new_run_id(started)


def run_sort_key(run_id: str) -> tuple[str, int]:
    """Orders run ids by time, then by same-second suffix (``-10`` after ``-9``)."""
    match = RUN_ID_RE.match(run_id)
    if match:
        return (match.group(1), int(match.group(2) or 1))
    return (run_id, 0)


def find_caliper_dir(start: Path) -> Path | None:
    """The nearest ``.caliper/`` directory at or above ``start``, if any."""
    start = start.resolve()
    for folder in (start, *start.parents):
        candidate = folder / ROOT_DIR
        if candidate.is_dir():
            return candidate
    return None


def caliper_root(start: Path, spec_path: Path | None) -> Path:
    """Where runs are stored: the nearest ``.caliper/`` at or above ``start``, else beside
    ``spec_path`` (not created here). Raises :class:`ResultsError` when there is neither."""
    found = find_caliper_dir(start)
    if found is not None:
        return found
    if spec_path is not None:
        return spec_path.resolve().parent / ROOT_DIR
    raise ResultsError(
        f"No {ROOT_DIR}/ directory at or above {start.resolve()}, so there are no saved runs "
        "to read.",
        hint="Run `caliper run SPEC` first, or change to the folder where you ran it, or name "
        "a results JSON file or a spec file directly.",
    )


def _write_error(path: Path, exc: OSError) -> ResultsWriteError:
    return ResultsWriteError(
        f"Could not save results to {path}: {describe_os_error(exc)}.",
        hint="Free some space or fix the folder's permissions, then run again "
        "(or pass --output to save elsewhere).",
    )


def _claim(folder: Path, base: str) -> tuple[Path, str]:
    """Create an empty, new file for run ``base`` (``-2``, ``-3``… when taken)."""
    for n in range(1, MAX_SAME_SECOND + 1):
        run_id = base if n == 1 else f"{base}-{n}"
        path = folder / f"{run_id}.json"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            continue
        os.close(fd)
        return path, run_id
    raise ResultsWriteError(
        f"Could not save results in {folder}: {MAX_SAME_SECOND} runs already use the id {base}."
    )


def claim_journal(folder: Path, base: str, first: Callable[[str], dict]):
    """Create a new run's journal in ``folder`` under run id ``base`` (``-2``, ``-3``… when
    taken by a results file or a journal); ``first(run_id)`` gives its header line.

    Returns the open :class:`~caliper.results.journal.JournalWriter` and the run id. Raises
    :class:`OSError` when the folder cannot be written.
    """
    from caliper.results.journal import JOURNAL_SUFFIX, JournalWriter

    folder.mkdir(parents=True, exist_ok=True)
    for n in range(1, MAX_SAME_SECOND + 1):
        run_id = base if n == 1 else f"{base}-{n}"
        if (folder / f"{run_id}.json").exists():
            continue
        try:
            writer = JournalWriter.create(folder / f"{run_id}{JOURNAL_SUFFIX}", first(run_id))
        except FileExistsError:
            continue
        return writer, run_id
    raise ResultsWriteError(
        f"Could not save results in {folder}: {MAX_SAME_SECOND} runs already use the id {base}."
    )


def claim_results(folder: Path, base: str) -> tuple[Path, str]:
    """Reserve ``<run-id>.json`` in ``folder`` for a run saved without a journal."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return _claim(folder, base)
    except OSError as exc:
        raise _write_error(folder, exc) from exc


def release_claim(path: Path) -> None:
    """Give back a name :func:`claim_results` reserved when nothing was written to it yet (it
    is still the empty file the claim made), so a save stopped by Ctrl-C or an error leaves no
    empty run in the store; a file the whole run was written to is kept."""
    with contextlib.suppress(OSError):
        if path.stat().st_size == 0:
            path.unlink()


def rescue(
    results: RunResults, failure: ResultsWriteError, output: Path | None, *, text: Text
) -> ResultsWriteError:
    """Write the run's ``text`` to ``output`` or the temp folder after the store failed;
    the returned error says where it went."""
    return _rescue(results, failure, output, text=text)


def _results_error(exc: OutputWriteError) -> ResultsWriteError:
    """The output writer's error as the store reports it (exit 74 kept for a full disk)."""
    return ResultsWriteError(
        f"Could not save results to {exc.path}: {exc.reason}",
        hint=exc.hint
        or "Free some space or fix the folder's permissions, then run again "
        "(or pass --output to save elsewhere).",
        exit_code=exc.exit_code,
    )


def write_atomic(path: Path, text: Text) -> None:
    """Write ``text`` (a ``str``, or pieces of it) to the regular file ``path`` whole or not
    at all, through the one output writer (:func:`caliper.system.output_file.write_output`).

    Raises :class:`ResultsWriteError` on any OS error; no temporary file is left.
    """
    from caliper.system.output_file import OutputWriteError, write_output

    try:
        write_output(path, text)
    except OutputWriteError as exc:
        raise _results_error(exc) from exc


def writes_directly(path: Path) -> bool:
    """True when ``path`` is a character device or FIFO: written in place, so the folder it
    is in need not be writable."""
    from caliper.system.output_file import writes_in_place

    return writes_in_place(path)


def export_problem(path: Path) -> str | None:
    """Why ``path`` cannot take a copy of a run (a folder, block device or socket), if so."""
    from caliper.system.output_file import output_problem

    return output_problem(path)


def write_export(path: Path, text: Text) -> None:
    """Write a copy of a run to a user-named ``path`` (``--output``, a rescue place) through
    the one output writer: a regular file (or a new one) is replaced atomically, through any
    symlink; a character device or FIFO is written in place, never renamed over; a folder,
    block device or socket is refused with :class:`ResultsWriteError`.
    """
    from caliper.system.output_file import OutputWriteError, write_output

    try:
        write_output(path, text)
    except OutputWriteError as exc:
        error = _results_error(exc)
        if "not a file" in exc.message:
            error.hint = "Name a file such as run.json."
        raise error from exc


def save_run(
    results: RunResults,
    *,
    spec_path: Path,
    output: Path | None = None,
    root: Path | None = None,
    limits: StorageLimits | None = None,
) -> Path:
    """Save ``results`` in the store (and also at ``output`` when given); return the store path.

    ``root`` is the ``.caliper/`` folder to save in (default: found from the current folder
    and ``spec_path``); ``caliper run`` resolves it when the run starts. ``limits`` caps the
    text each attempt keeps (default: ``StorageLimits()``; see :mod:`caliper.results.compact`).

    The run id is fixed here (``results.meta.run_id`` is updated to the one used), so it is
    always a UTC timestamp and never collides with a run saved earlier. When the store cannot
    be written (disk full, read-only folder), the results are rescued to ``output`` or to a
    file in the system temp folder, and the :class:`ResultsWriteError` raised says where.
    """
    if root is None:
        root = caliper_root(Path.cwd(), spec_path)
    folder = root / RESULTS_DIR / results.meta.spec_name
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path, run_id = _claim(folder, _base_run_id(results))
    except OSError as exc:
        results.meta.run_id = _base_run_id(results)
        raise _rescue(results, _write_error(folder, exc), output, limits) from exc
    results.meta.run_id = run_id
    from caliper.results import codec  # cattrs: imported only when a run is written or read

    try:
        text = codec.dumps(results, limits)
        write_atomic(path, text)
    except ResultsWriteError as exc:
        path.unlink(missing_ok=True)
        raise _rescue(results, exc, output, limits) from exc
    except BaseException:  # Ctrl-C (or a bug): give the reserved name back
        path.unlink(missing_ok=True)
        raise
    _save_summary(path, results)
    if output is not None:
        try:
            write_export(output, text)
        except ResultsWriteError as exc:
            raise ResultsWriteError(
                f"Results were saved to {path}, but the --output copy failed. {exc.message}",
                hint=exc.hint,
                exit_code=exc.exit_code,
            ) from exc
    return path


def save_assembled(
    text: Text,
    results: RunResults,
    *,
    path: Path,
    output: Path | None = None,
    journal: Path | None = None,
) -> Path:
    """Write a run assembled from its journal (``text``, whole or re-iterable pieces of it,
    written as they come) atomically to ``path``, its claimed
    place in the store, then remove ``journal``; also copy it to ``output`` when given.

    When the store cannot be written the journal is kept (the run can still be reported and
    resumed) and the results are rescued as :func:`save_run` does.
    """
    try:
        write_atomic(path, text)
    except ResultsWriteError as exc:
        raise _rescue(results, exc, output, text=text) from exc
    _save_summary(path, results)
    if journal is not None:
        journal.unlink(missing_ok=True)
    if output is not None:
        try:
            write_export(output, text)
        except ResultsWriteError as exc:
            raise ResultsWriteError(
                f"Results were saved to {path}, but the --output copy failed. {exc.message}",
                hint=exc.hint,
                exit_code=exc.exit_code,
            ) from exc
    return path


def _save_summary(path: Path, results: RunResults) -> None:
    """Save the listing summary of the run just written to ``path`` beside it
    (:mod:`caliper.results.run_summary`), so ``caliper list`` need not decode it.

    Not for a partial run (stopped, or a budget reached): scoring a large run takes seconds,
    which would stand between a stopped run's save and its exit; ``caliper list`` summarises
    such a run once, the first time it lists it."""
    if results.meta.partial:
        return
    from caliper.results.run_summary import summarize, write_summary

    write_summary(path, summarize(results))


def rescue_path(results: RunResults) -> Path:
    """Where a run that could not be saved in the store is written instead."""
    import tempfile

    name = f"caliper-{results.meta.spec_name}-{results.meta.run_id}.json"
    return Path(tempfile.gettempdir()) / name


def _rescue(
    results: RunResults,
    failure: ResultsWriteError,
    output: Path | None,
    limits: StorageLimits | None = None,
    text: Text | None = None,
) -> ResultsWriteError:
    """Write the run to ``output`` or the temp folder; the error to raise says where it went."""
    from caliper.results import codec

    try:
        text = text if text is not None else codec.dumps(results, limits)
    except Exception:  # the run cannot be serialised: nothing more to try
        return failure
    places = [p for p in (output, rescue_path(results)) if p is not None and _keeps_a_copy(p)]
    for place in places:
        try:
            write_export(place, text)
        except ResultsWriteError:
            continue
        return ResultsWriteError(
            f"{failure.message} The results were saved to {place} instead.",
            hint=f"Show them with `caliper report {place}`; move the file into "
            f".caliper/results/{results.meta.spec_name}/ once there is room.",
        )
    return ResultsWriteError(
        f"{failure.message} Saving them anywhere else failed too, so this run's results are lost.",
        hint=failure.hint,
    )


def _keeps_a_copy(path: Path) -> bool:
    """True when ``path`` is (or would be) a regular file, so a run written there is kept
    (``/dev/null`` or a pipe is no place to rescue a run to)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def load_run(path: Path, *, transcripts: bool = True) -> RunResults:
    """Read one results file (or a killed run's journal, as a partial run); a missing,
    unreadable or foreign file raises :class:`ResultsError`.

    ``transcripts=False`` reads a summary: every attempt's ``transcript`` is ``None`` (see
    :func:`caliper.results.codec.from_data`).
    """
    from caliper.results import codec
    from caliper.results.journal import JOURNAL_SUFFIX

    if not path.name.endswith(JOURNAL_SUFFIX):
        return _load_results_file(path, transcripts=transcripts)
    try:
        return codec.from_data(load_run_data(path), transcripts=transcripts)
    except codec.ResultsDecodeError as exc:
        raise ResultsError(f"{path} is not a readable caliper journal: {exc}.") from None


def load_run_data(path: Path) -> dict[str, Any]:
    """A saved run's data in its stored form (attempts capped and written once, as on disk),
    from a results file or a journal. Raises :class:`ResultsError` like :func:`load_run`."""
    from caliper.results.journal import (
        JOURNAL_SUFFIX,
        JournalError,
        journal_run_data,
        read_journal,
    )

    if path.name.endswith(JOURNAL_SUFFIX):
        try:
            return journal_run_data(read_journal(path), path)
        except FileNotFoundError:
            raise ResultsError(f"No journal at {path}.") from None
        except OSError as exc:
            raise ResultsError(f"Cannot read journal {path}: {exc}.") from None
        except JournalError as exc:
            raise ResultsError(
                f"{exc}, so it is not a readable caliper journal.",
                hint="Point at a file under .caliper/results/, or re-run the spec.",
            ) from None
    from caliper.results import codec

    data = None
    try:
        data = codec.parse(_read_results_text(path))
        codec.check(data)  # the same checks and messages as a plain read, read once
    except codec.ResultsDecodeError as exc:
        raise _not_results(path, exc, data) from None
    return data


def _read_results_text(path: Path) -> str:
    """The text of a results file; a missing, unreadable or empty one raises
    :class:`ResultsError`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultsError(f"No results file at {path}.") from None
    except IsADirectoryError:
        raise ResultsError(f"{path} is a folder, not a results file.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"Cannot read results file {path}: {exc}.") from None
    if not text.strip():
        raise ResultsError(
            f"Results file {path} is empty (a run may still be saving, or it was interrupted)."
        )
    return text


def _not_results(path: Path, exc: Exception, data: Any = None) -> ResultsError:
    from caliper.results.legacy import LEGACY_NAME, is_legacy

    if is_legacy(data):  # a run of the earlier tool: it can be shown, not built on
        return ResultsError(
            f"{path} was saved by {LEGACY_NAME}: `caliper list`, `report` and `compare` "
            "read it, but a new run cannot be made from it.",
            hint="Run the spec again with this caliper (`caliper migrate SPEC` converts a spec "
            "of the earlier tool first; see docs/migration.md).",
        )
    return ResultsError(
        f"{path} is not a readable caliper results file: {exc}.",
        hint="Point at a file under .caliper/results/, or re-run the spec.",
    )


def _load_results_file(path: Path, *, transcripts: bool = True) -> RunResults:
    from caliper.results import codec

    results = _read_records(path) if not transcripts else codec.read_file(path)
    if results is not None:
        return results
    data = None
    try:  # not readable that way: the plain read says what is wrong with the file
        data = codec.parse(_read_results_text(path))
        return codec.from_data(data, transcripts=transcripts)
    except codec.ResultsDecodeError as exc:
        from caliper.results import legacy

        if legacy.is_legacy(data):  # the earlier tool's run: read it as it is, read-only
            try:
                return legacy.from_legacy(data, path, transcripts=transcripts)
            except legacy.LegacyDecodeError as bad:
                raise ResultsError(f"{path}: {bad}.") from None
        raise _not_results(path, exc) from None


def _read_records(path: Path) -> RunResults | None:
    """The run at ``path`` without transcripts, decoded a piece at a time; ``None`` when it
    cannot be read that way. A run in a store (``.caliper/results/SPEC/``) is read from its
    records sidecar when that was saved for the file's present content, and the sidecar is
    saved after a decode for the next read; a file elsewhere never gets one."""
    import hashlib

    from caliper.results import codec, records_cache

    if not in_store(path):
        return codec.read_file(path, transcripts=False)
    results = records_cache.read_records(path)
    if results is not None:
        return results
    digest = hashlib.sha256()
    results = codec.read_file(path, transcripts=False, digest=digest)
    if results is not None:
        records_cache.write_records(path, results, digest.hexdigest())
    return results


def in_store(path: Path) -> bool:
    """Whether ``path`` is a run file in a store: ``.caliper/results/SPEC/RUN.json``."""
    folders = path.absolute().parts[-4:-1]
    return len(folders) == 3 and folders[:2] == (ROOT_DIR, RESULTS_DIR)


def list_runs(root: Path, spec_name: str | None = None) -> list[RunEntry]:
    """Saved runs under ``root`` (one spec's, or all), oldest first.

    Temporary files and empty names reserved by a save in progress are skipped.
    """
    results_dir = root / RESULTS_DIR
    if spec_name is not None:
        folders = [results_dir / spec_name]
    elif results_dir.is_dir():
        folders = sorted(p for p in results_dir.iterdir() if p.is_dir())
    else:
        folders = []
    from caliper.results.journal import JOURNAL_SUFFIX, run_id_of

    entries = []
    for folder in folders:
        if not folder.is_dir():
            continue
        found = {
            file.stem: RunEntry(folder.name, file.stem, file)
            for file in folder.glob("*.json")
            if not file.name.startswith(".") and _has_content(file)
        }
        for journal in folder.glob(f"*{JOURNAL_SUFFIX}"):
            if journal.name.startswith(".") or not _has_content(journal):
                continue
            run_id = run_id_of(journal)
            final = found.get(run_id)
            # a journal newer than the final file is a resume that was killed; an older one
            # is left over from a save cut short just before the journal was removed
            if final is None or _mtime(journal) > _mtime(final.path):
                found[run_id] = RunEntry(folder.name, run_id, journal, incomplete=True)
        entries += found.values()
    return sorted(entries, key=lambda e: (run_sort_key(e.run_id), e.spec_name))


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


def _has_content(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def latest_run(root: Path, spec_name: str | None = None) -> RunEntry | None:
    """The most recent run under ``root`` (of one spec, or of any)."""
    entries = list_runs(root, spec_name)
    return entries[-1] if entries else None


def _looks_like_spec_path(ref: str) -> bool:
    return ref.endswith(SPEC_SUFFIXES) or os.sep in ref or "/" in ref


def _known(root: Path) -> str:
    specs = sorted({e.spec_name for e in list_runs(root)})
    if not specs:
        return f"There are no saved runs under {root / RESULTS_DIR}."
    return f"Specs with saved runs under {root / RESULTS_DIR}: {', '.join(specs)}."


def _latest_of(root: Path, spec_name: str, asked: str) -> Path:
    entry = latest_run(root, spec_name)
    if entry is None:
        import difflib

        specs = sorted({e.spec_name for e in list_runs(root)})
        close = difflib.get_close_matches(spec_name, specs, n=1)
        hint = f"Did you mean {close[0]!r}? " if close else ""
        raise ResultsError(
            f"No saved run for {asked} (looked in {root / RESULTS_DIR / spec_name}).",
            hint=hint + _known(root),
        )
    return entry.path


def _run_by_id(ref: str, cwd: Path) -> Path | None:
    """The run a run id (as ``caliper list`` shows it) or ``SPEC/RUN-ID`` names, if ``ref``
    has that form; ``None`` when it has not. Raises :class:`ResultsError` when no run, or
    runs of several specs, have that id."""
    spec_name, _, run_id = ref.rpartition("/")
    if not RUN_ID_RE.match(run_id) or "/" in spec_name:
        return None
    root = caliper_root(cwd, None)
    matches = [e for e in list_runs(root, spec_name or None) if e.run_id == run_id]
    if len(matches) == 1:
        return matches[0].path
    if not matches:
        where = root / RESULTS_DIR / spec_name if spec_name else root / RESULTS_DIR
        raise ResultsError(
            f"No saved run with id {run_id} (looked in {where}).",
            hint="Run `caliper list SPEC` to see the run ids of a spec. " + _known(root),
        )
    specs = ", ".join(f"{e.spec_name}/{e.run_id}" for e in matches)
    raise ResultsError(
        f"Several specs have a run with id {run_id}: {specs}.",
        hint=f"Name one as SPEC/RUN-ID, e.g. `{matches[0].spec_name}/{run_id}`.",
    )


def spec_of_ref(ref: str, *, cwd: Path) -> tuple[Path, str] | None:
    """The caliper root and spec name when ``ref`` names a spec (a spec name or spec file,
    as :func:`resolve_run_ref` reads it); ``None`` when it names one run (a results or
    journal file, a run id or ``SPEC/RUN-ID``)."""
    if ref.endswith((".json", ".journal.jsonl")):
        return None
    candidate = Path(ref).expanduser()
    if not candidate.is_absolute():
        candidate = cwd / candidate
    spec_part, _, last = ref.rpartition("/")
    if not candidate.exists() and RUN_ID_RE.match(last) and "/" not in spec_part:
        return None
    if candidate.is_file() or _looks_like_spec_path(ref):
        return caliper_root(cwd, candidate), spec_name_for(candidate)
    return caliper_root(cwd, None), ref


def resolve_run_ref(ref: str, *, cwd: Path) -> Path:
    """The results file that ``ref`` names.

    ``ref`` is a results JSON path, a run id as ``caliper list`` shows it (or
    ``SPEC/RUN-ID`` when several specs share one), a spec file path (its latest run) or a
    spec name (its latest run under the caliper root found from ``cwd``).
    """
    candidate = Path(ref).expanduser()
    if not candidate.is_absolute():
        candidate = cwd / candidate
    if not candidate.exists():
        found = _run_by_id(ref, cwd)
        if found is not None:
            return found
    if ref.endswith(".journal.jsonl") and candidate.is_file():
        return candidate
    if ref.endswith(".json"):
        if not candidate.is_file():
            raise ResultsError(
                f"No results file at {candidate}.",
                hint="Run `caliper list` to see saved runs and their paths.",
            )
        return candidate
    if candidate.is_file() or _looks_like_spec_path(ref):
        # A spec that was deleted or moved still names its runs, so it need not exist.
        root = caliper_root(cwd, candidate)
        return _latest_of(root, spec_name_for(candidate), f"spec {str(candidate)!r}")
    root = caliper_root(cwd, None)
    return _latest_of(root, ref, f"spec {ref!r}")
