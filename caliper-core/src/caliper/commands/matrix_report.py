"""The matrix view behind ``caliper report --matrix ID`` / ``caliper report RUN RUN…`` and
``caliper compare --matrix ID``: finding a matrix's runs and showing them side by side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from caliper.errors import UsageError
from caliper.report import make_console
from caliper.report.matrix_view import matrix_markdown, render_matrix
from caliper.results.codec import kept_until_exit
from caliper.results.matrix import build_matrix, matrix_data
from caliper.results.store import caliper_root, list_runs, load_run, load_run_data, resolve_run_ref

if TYPE_CHECKING:
    from caliper.results.models import RunResults

FORMATS = ("text", "json", "markdown", "html")


def matrix_paths(matrix_id: str, cwd: Path) -> list[Path]:
    """The saved runs whose ``meta.matrix.id`` is ``matrix_id`` (``SPEC/ID`` looks in that
    spec's runs only), in the order of the matrix's ``--model`` flags."""
    spec_name, _, ident = matrix_id.rpartition("/")
    root = caliper_root(cwd, None)
    needle = json.dumps(ident).encode("utf-8")
    found: list[tuple[int, Path]] = []
    for entry in list_runs(root, spec_name or None):
        try:
            if needle not in entry.path.read_bytes():  # cheap: most runs are not in it
                continue
            meta = load_run_data(entry.path)["meta"]
        except Exception:  # an unreadable run is not part of any matrix
            continue
        matrix = meta.get("matrix") or {}
        if matrix.get("id") == ident:
            engines = list(matrix.get("engines") or [])
            position = engines.index(matrix.get("engine")) if matrix.get("engine") in engines else 0
            found.append((position, entry.path))
    if not found:
        raise UsageError(
            f"No saved run belongs to matrix {matrix_id!r} (looked under {root / 'results'}).",
            hint="A matrix id is in the meta.matrix.id of each run of `caliper run SPEC "
            "--model A --model B`; `caliper run` prints it at the end.",
        )
    return [path for _, path in sorted(found, key=lambda item: item[0])]


def load_matrix_runs(paths: list[Path], *, transcripts: bool = False) -> list[RunResults]:
    """The runs at ``paths`` (summaries, or with their transcripts when ``transcripts``);
    runs of different specs are refused (exit 2)."""
    runs = [load_run(path, transcripts=transcripts) for path in paths]
    first = runs[0]
    for path, run in zip(paths[1:], runs[1:], strict=True):
        if run.meta.spec_name != first.meta.spec_name:
            raise UsageError(
                f"{paths[0]} and {path} are runs of different specs "
                f"({first.meta.spec_name!r} vs {run.meta.spec_name!r}), so their tasks cannot "
                "be set side by side.",
                hint="Give runs of one spec (the runs of one `caliper run --model A --model B`).",
            )
    return runs


def show_matrix(
    matrix_id: str | None,
    refs: tuple[str, ...],
    output_format: str,
    confidence: float,
    output: Path | None = None,
) -> None:
    """Print the matrix of ``matrix_id``'s runs, or of the runs ``refs`` name, as
    ``output_format`` (``text``, ``json``, ``markdown`` or ``html``; the page goes to
    ``output`` when given, else to stdout)."""
    if output_format not in FORMATS:
        raise UsageError(
            f"--format {output_format} is not available for a matrix.",
            hint="Use --format text, json, markdown or html.",
        )
    cwd = Path.cwd()
    if matrix_id is not None and refs:
        raise UsageError(
            "Give either --matrix ID or the runs to set side by side, not both.",
            hint="`caliper report --matrix ID` finds the matrix's runs itself.",
        )
    paths = (
        matrix_paths(matrix_id, cwd) if matrix_id else [resolve_run_ref(r, cwd=cwd) for r in refs]
    )
    if len({p.resolve() for p in paths}) != len(paths):
        raise UsageError("The same run is given twice.", hint="Name each run once.")
    if output_format == "html":
        _emit_html(paths, confidence, output)
        return
    matrix = build_matrix(load_matrix_runs(paths), confidence)
    if output_format == "json":
        data = matrix_data(matrix)
        data["paths"] = [str(p) for p in paths]
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    elif output_format == "markdown":
        click.echo(matrix_markdown(matrix), nl=False)
    else:
        render_matrix(matrix, make_console())


def _emit_html(paths: list[Path], confidence: float, output: Path | None) -> None:
    """The matrix page of the runs at ``paths`` (read with their transcripts, for the
    viewer), written to ``output`` or stdout. The page names runs as ``SPEC/RUN-ID``, never
    by their paths: it is meant to be shared."""
    from caliper.report.html.output import emit_page
    from caliper.report.html.pages import matrix_page

    with kept_until_exit():
        runs = load_matrix_runs(paths, transcripts=True)
    emit_page(matrix_page(build_matrix(runs, confidence), runs), output)
