"""The pages: one run, two runs compared, one spec's history, a matrix. Each returns HTML text."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec

from caliper.report import fmt
from caliper.report.baseline_text import pair_title, sequential_note, verdict_sentence
from caliper.report.html import history_data
from caliper.report.html.compare_data import compare_view
from caliper.report.html.env import render
from caliper.report.html.matrix_data import matrix_page_view
from caliper.report.html.run_data import AttemptDetails, meta_line, run_view
from caliper.results.baseline import BaselineVerdict
from caliper.results.codec import gc_paused
from caliper.results.compare import RunComparison
from caliper.results.matrix import Matrix
from caliper.results.models import RunResults
from caliper.results.scoring import score_run
from caliper.results.stats import DEFAULT_CONFIDENCE

P = ParamSpec("P")


def _collector_paused(make: Callable[P, str]) -> Callable[P, str]:
    """``make`` (a page) built with Python's cycle collector paused
    (:func:`caliper.results.codec.gc_paused`): the page of a big run is millions of dicts,
    lists and strings, none in a reference cycle, that every collection their allocations
    trigger would walk again."""

    @functools.wraps(make)
    def paused(*args: P.args, **kwargs: P.kwargs) -> str:
        with gc_paused():
            return make(*args, **kwargs)

    return paused


@_collector_paused
def run_page(
    results: RunResults,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    details: AttemptDetails | None = None,
) -> str:
    """The report of one saved run as one self-contained HTML document, intervals at
    ``confidence``. The page names the run by ``SPEC/RUN-ID`` and the spec by its file name:
    it is meant to be shared, so it carries no local path. ``details``: the attempts' viewer
    data, shared with other pages written with this one."""
    view = run_view(results, confidence, details)
    return render("run.html.j2", title=meta_line(results.meta), view=view)


@_collector_paused
def compare_page(
    a: RunResults,
    b: RunResults,
    comparison: RunComparison,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    pages: tuple[str | None, str | None] = (None, None),
    details: AttemptDetails | None = None,
) -> str:
    """Two runs side by side per task: both scores with intervals, Δ with its interval, the
    significance figures the comparison carries, and an engine matrix when engines differ.
    ``pages``: relative links to each run's own report page, where written (else ``None``);
    ``details``: the attempts' viewer data already made for those pages."""
    view = compare_view(a, b, comparison, confidence, pages, details)
    return render("compare.html.j2", title=f"{comparison.spec_name}: {comparison.title}", view=view)


@_collector_paused
def baseline_page(
    control: RunResults,
    full: RunResults,
    verdict: BaselineVerdict,
    gate: list[str],
    *,
    pages: tuple[str | None, str | None] = (None, None),
    details: AttemptDetails | None = None,
) -> str:
    """A baseline pair (``caliper run --baseline``): the compare page of control → full,
    headed by the verdict as a lift (helps / hurts / no detectable difference, with the
    smallest lift the pair could detect), the gate's failures and both arms' activation.
    ``pages``: relative links to each arm's own report page, where written (else ``None``);
    ``details``: the attempts' viewer data already made for those pages."""
    comparison = verdict.comparison
    view = compare_view(control, full, comparison, comparison.confidence, pages, details)
    view["baseline"] = {
        "title": pair_title(verdict),
        "verdict": verdict.verdict,
        "verdict_class": verdict.verdict.replace(" ", "-"),
        "sentence": verdict_sentence(verdict),
        "sequential_note": sequential_note(verdict),
        "gate": list(gate),
        "activation": [
            _arm_activation(f"without {', '.join(verdict.left_out)}", control, comparison),
            _arm_activation("full", full, comparison),
        ],
    }
    return render(
        "compare.html.j2", title=f"{comparison.spec_name}: {pair_title(verdict)}", view=view
    )


def _arm_activation(label: str, results: RunResults, comparison: RunComparison) -> dict[str, Any]:
    """One arm's activation scoreboard as rows of text for the page."""
    run = score_run(results, comparison.confidence)
    return {
        "label": label,
        "rows": [
            {
                "skill": skill.skill,
                "ablated": skill.ablated,
                "expected": skill.expected,
                "fired": skill.fired,
                "recall": fmt.pct_interval(skill.recall, skill.recall_interval),
                "precision": fmt.pct_interval(skill.precision, skill.precision_interval),
            }
            for skill in run.activation_per_skill
        ],
    }


@_collector_paused
def history_page(
    spec: str,
    rows: list[dict[str, Any]],
    links: dict[str, str],
    matrix: dict[str, Any] | None,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    detail: dict[str, Any] | None = None,
) -> str:
    """A spec's runs over time: score and activation charts with interval bands (a colour per
    engine, hollow dots for ablated runs, each dot a link to ``links[run_id]``), the runs
    table and, when there are several engines or ablations, the matrix of their latest runs.

    ``rows`` are :func:`caliper.commands.history.history_rows`, oldest first. ``detail``
    (:func:`caliper.report.html.history_tasks.history_detail`) adds a run picker showing the
    chosen run's tasks and scores, a row per task with its score in each run, and the
    baseline pairs.
    """
    readable = [r for r in rows if "error" not in r]
    return render(
        "history.html.j2",
        title=f"{spec}: history",
        spec=spec,
        runs=len(rows),
        score_chart=history_data.chart(rows, "score", links, "score over runs"),
        activation_chart=(
            history_data.chart(rows, "activation", links, "activation over runs")
            if any(r["activation"] is not None for r in readable)
            else None
        ),
        colours=history_data.engine_colours(rows),
        table=history_data.table_rows(rows, links),
        matrix=matrix,
        confidence=confidence,
        detail=detail,
    )


@_collector_paused
def matrix_page(matrix: Matrix, runs: Sequence[RunResults]) -> str:
    """The runs of a matrix side by side (``caliper report --matrix ID --format html``):
    engines across, tasks down, each cell clickable into its attempts, every task's final
    answers side by side across engines, and the pairwise differences the text form lists."""
    view = matrix_page_view(matrix, runs)
    return render("matrix.html.j2", title=view["title"], view=view)
