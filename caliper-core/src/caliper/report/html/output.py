"""Writing a page where the command was asked to: a file (``-o FILE``) or stdout; and, beside
a page that links to runs (history, compare), each run's own report page."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import click

from caliper.errors import UsageError
from caliper.report.html.pages import compare_page, run_page
from caliper.report.html.run_data import AttemptDetails
from caliper.results.models import RunResults
from caliper.system.output_file import OutputWriteError, write_output, writes_in_place

if TYPE_CHECKING:
    from caliper.results.compare import RunComparison


def run_html(results: RunResults, path: Path | None, confidence: float) -> str:
    """The run page of ``results`` (read from ``path``, which the page does not show: it is
    meant to be shared), intervals at ``confidence``."""
    return run_page(results, confidence=confidence)


def runs_dir(page: Path) -> Path:
    """Where the page at ``page`` keeps the report pages of the runs it links to
    (``<stem>.runs/`` beside it)."""
    return page.with_name(page.stem + ".runs")


def _page_name(run_id: str, taken: set[str]) -> str:
    """A file name for the report page of run ``run_id`` that ``taken`` (names already given,
    lower-cased) does not hold: ``<run-id>.html`` when the id is a plain file name (letters,
    digits, ``.``, ``_``, ``-``), else the id with every other character replaced by ``_``;
    ``run`` in front when it would start with a dot; ``-2``, ``-3``... when the name is taken."""
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", run_id)
    if not stem or stem.startswith("."):
        stem = "run" + stem
    name, n = f"{stem}.html", 1
    while name.lower() in taken:
        n += 1
        name = f"{stem}-{n}.html"
    taken.add(name.lower())
    return name


def write_run_pages(
    runs: Sequence[RunResults],
    page: Path,
    confidence: float,
    details: AttemptDetails | None = None,
) -> list[str]:
    """Write the report page of each of ``runs`` into :func:`runs_dir` of ``page`` through
    :func:`write_page`; return each one's link, relative to ``page``'s folder and URL-quoted,
    in the order of ``runs``. The caller writes ``page`` itself, after these (with
    ``details``, the attempts' viewer data these pages made)."""
    _refuse_folder(page)  # before anything is written beside it
    folder = runs_dir(page)
    taken: set[str] = set()
    links = []
    for results in runs:
        name = _page_name(results.meta.run_id, taken)
        text = run_page(results, confidence=confidence, details=details)
        write_page(_encodable(text), folder / name)
        links.append(f"{quote(folder.name)}/{quote(name)}")
    return links


def _refuse_folder(output: Path) -> None:
    if output.is_dir():
        raise UsageError(f"-o {output} is a folder.", hint="Name a file, e.g. -o report.html.")


def write_page(text: str, output: Path) -> None:
    """Write ``text`` to ``output`` through the one output writer (a file whole or not at
    all, a device or FIFO in place); an error becomes a usage error (74 for a full disk)."""
    _refuse_folder(output)
    try:
        write_output(output, text)
    except OutputWriteError as exc:
        raise UsageError(
            f"Could not write {output}: {exc.reason}",
            hint=None if exc.full else exc.hint or "Choose another -o FILE.",
            exit_code=exc.exit_code if exc.full else None,
        ) from None


def _encodable(text: str) -> str:
    """``text`` with lone surrogates (undecodable bytes a CLI printed) replaced by ``?``, so
    the page can always be written as UTF-8."""
    return text.encode("utf-8", errors="replace").decode("utf-8")


def emit_page(text: str, output: Path | None, *, also: str = "") -> None:
    """Write ``text`` to ``output`` (saying so on stderr, followed by ``also``), or to stdout
    when ``output`` is None."""
    text = _encodable(text)
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    write_page(text, output)
    click.echo(f"Wrote {output} ({len(text.encode('utf-8')) / 1024:.0f} KiB){also}.", err=True)


def emit_with_run_pages(
    runs: Sequence[RunResults],
    output: Path | None,
    confidence: float,
    page_for: Callable[[tuple[str | None, ...], AttemptDetails], str],
) -> None:
    """The page ``page_for(links, details)`` over ``runs`` at ``output`` (stdout when
    ``None``), said on stderr.

    A page written to a file gets each run's own report page beside it
    (:func:`write_run_pages`, in ``<stem>.runs/``) and ``links`` are the relative links to
    them, in the order of ``runs``; a page written in place (stdout, a device, a FIFO) has no
    folder beside it, so ``links`` are all ``None`` and the page shows the ``caliper report``
    command that makes each run's page instead. ``details`` holds the attempts' viewer data
    the run pages made, so the page shows the same attempts without making them again."""
    details = AttemptDetails()
    if output is None or writes_in_place(output):
        emit_page(page_for((None,) * len(runs), details), output)
        return
    links = write_run_pages(runs, output, confidence, details)
    also = f" and the {len(runs)} runs' report pages in {runs_dir(output)}"
    emit_page(page_for(tuple(links), details), output, also=also)


def emit_compare(
    a: RunResults, b: RunResults, comparison: RunComparison, output: Path | None, confidence: float
) -> None:
    """The compare page of ``a`` → ``b`` at ``output``, with both runs' own report pages
    beside it (see :func:`emit_with_run_pages`)."""

    def page_for(links: tuple[str | None, ...], details: AttemptDetails) -> str:
        before, after = links
        return compare_page(
            a, b, comparison, confidence=confidence, pages=(before, after), details=details
        )

    emit_with_run_pages([a, b], output, confidence, page_for)
