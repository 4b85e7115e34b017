"""The views of a run grow linearly with its tasks: each is drawn for n and 4n tasks of a
stopped run (most tasks without attempts, as after a Ctrl-C early in a big spec) and its CPU
time may grow at most ×8 (linear work grows ×4; the quadratic per-row scans this guards
against grew ×12–16). The best of three tries is taken, so a busy machine slows both sides."""

from __future__ import annotations

import io
import time
from collections.abc import Callable

import pytest
from rich.console import Console
from test_results_support import F, P, run, task

from caliper.results.models import RunResults

pytestmark = pytest.mark.slow

SMALL = 1500
RATIO = 8.0


def _stopped_run(tasks: int, run_id: str) -> RunResults:
    """``tasks`` tasks of which the first 50 ran once; the run was stopped."""
    made = [
        task(f"task-{i:05d} does one small thing", [P if i % 2 else F] if i < 50 else [])
        for i in range(tasks)
    ]
    return run(made, run_id=run_id, k=1, partial=True, stop_reason="interrupted (Ctrl-C)")


def _cpu(draw: Callable[[RunResults, RunResults], object], tasks: int) -> float:
    a, b = _stopped_run(tasks, "a"), _stopped_run(tasks, "b")
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        draw(a, b)
        best = min(best, time.process_time() - started)
    return best


def _text(a: RunResults, _b: RunResults) -> None:
    from caliper.report.run_view import render_run

    render_run(a, Console(file=io.StringIO(), width=120))


def _markdown(a: RunResults, _b: RunResults) -> None:
    from caliper.report.markdown import run_markdown

    run_markdown(a, confidence=0.95)


def _html(a: RunResults, _b: RunResults) -> None:
    from caliper.report.html.pages import run_page

    run_page(a)


def _junit(a: RunResults, _b: RunResults) -> None:
    from caliper.report.junit import junit_document

    junit_document(a, None, 0.95)


def _compare_text(a: RunResults, b: RunResults) -> None:
    from caliper.report.compare_view import render_compare
    from caliper.results.compare import compare_runs

    render_compare(compare_runs(a, b), Console(file=io.StringIO(), width=120))


def _compare_html(a: RunResults, b: RunResults) -> None:
    from caliper.report.html.compare_data import compare_view, matrix_view
    from caliper.results.compare import compare_runs

    compare_view(a, b, compare_runs(a, b))
    matrix_view([a, b])


def _matrix(a: RunResults, b: RunResults) -> None:
    from caliper.report.matrix_view import matrix_markdown, render_matrix
    from caliper.results.matrix import build_matrix

    matrix = build_matrix([a, b], 0.95)
    render_matrix(matrix, Console(file=io.StringIO(), width=120))
    matrix_markdown(matrix)


@pytest.mark.parametrize(
    "draw",
    [_text, _markdown, _html, _junit, _compare_text, _compare_html, _matrix],
    ids=lambda f: f.__name__.strip("_"),
)
def test_a_view_grows_linearly_with_the_tasks(draw) -> None:
    small = _cpu(draw, SMALL)
    large = _cpu(draw, 4 * SMALL)
    assert large <= RATIO * max(small, 0.01), (
        f"{draw.__name__}: {small:.3f} s for {SMALL} tasks, {large:.3f} s for {4 * SMALL}"
    )
