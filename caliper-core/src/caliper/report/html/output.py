"""Writing a page where the command was asked to: a file (``-o FILE``) or stdout."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from caliper.errors import UsageError
from caliper.report.html.pages import run_page
from caliper.results.models import RunResults
from caliper.system.output_file import OutputWriteError, write_output


def run_html(results: RunResults, path: Path | None, confidence: float) -> str:
    """The run page of ``results`` (read from ``path``, which the page does not show: it is
    meant to be shared), intervals at ``confidence``."""
    return run_page(results, confidence=confidence)


def write_page(text: str, output: Path) -> None:
    """Write ``text`` to ``output`` through the one output writer (a file whole or not at
    all, a device or FIFO in place); an error becomes a usage error (74 for a full disk)."""
    if output.is_dir():
        raise UsageError(f"-o {output} is a folder.", hint="Name a file, e.g. -o report.html.")
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


def emit_page(text: str, output: Path | None) -> None:
    """Write ``text`` to ``output`` (saying so on stderr), or to stdout when ``output`` is None."""
    text = _encodable(text)
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    write_page(text, output)
    click.echo(f"Wrote {output} ({len(text.encode('utf-8')) / 1024:.0f} KiB).", err=True)
