"""A compare page and the run pages written beside it share each attempt's viewer data (made
once, the same pages as when each is made alone), and every page is built with Python's cycle
collector paused."""

from __future__ import annotations

import gc
import re

import attrs
import pytest
from html_support import F, P, demo_run, page_attempts, run, snapshot, task

from caliper.plugin.attempt import Usage
from caliper.report.html import pages, run_data
from caliper.report.html.output import emit_compare, runs_dir
from caliper.results.compare import compare_runs
from caliper.results.models import CheckRecord

NONCE = re.compile(r"nonce(-|=\")[A-Za-z0-9_-]+")


def _same_page(one: str, other: str) -> bool:
    """Equal but for the fresh nonce each page gets."""
    return NONCE.sub("nonce", one) == NONCE.sub("nonce", other)


def _pair():
    before = demo_run(run_id="2026-12-01T10-00-00Z")
    after = run(
        [
            task(
                "Writes a commit",
                [P, P, P],
                expected=["git-commit"],
                activated=[["git-commit"]] * 3,
            ),
            task("Config file", [F, P, P], expected=[], activated=[[], [], []]),
            task("Plain answer", [F, P, F]),
        ],
        run_id="2026-12-02T10-00-00Z",
        skills=[snapshot("git-commit"), snapshot("other-skill")],
    )
    return before, after


def test_a_compare_page_and_its_run_pages_make_each_attempt_once(tmp_path, monkeypatch):
    before, after = _pair()
    comparison = compare_runs(before, after)
    made = []
    real = run_data.attempt_details

    def counted(task, record, declared=()):
        made.append(record)
        return real(task, record, declared)

    monkeypatch.setattr(run_data, "attempt_details", counted)
    page = tmp_path / "cmp.html"
    emit_compare(before, after, comparison, page, 0.95)

    every = [a for results in (before, after) for t in results.tasks for a in t.attempts]
    assert len(made) == len(every)
    assert {id(record) for record in made} == {id(record) for record in every}

    # the same pages as when each is made on its own
    written = sorted(runs_dir(page).iterdir())
    assert len(written) == 2
    for results, path in zip((before, after), written, strict=True):
        text = path.read_text(encoding="utf-8")
        assert _same_page(text, pages.run_page(results, confidence=0.95))
        assert not any("run_attempt" in data for data in page_attempts(text).values())
    links = tuple(f"{runs_dir(page).name}/{path.name}" for path in written)
    alone = pages.compare_page(before, after, comparison, confidence=0.95, pages=links)
    text = page.read_text(encoding="utf-8")
    assert _same_page(text, alone)
    assert all("run_attempt" in data for data in page_attempts(text).values())


def test_a_judge_usage_on_the_page_is_every_usage_field():
    for usage in (Usage(10, 5, 3, 2), Usage(10, 5, None, None, cost_usd=0.25)):
        check = CheckRecord(key="expect", passed=True, usage=usage)
        assert run_data._judge_data(check)["judge_usage"] == attrs.asdict(usage)


@pytest.mark.parametrize("page", ["run", "compare"])
def test_a_page_is_built_with_the_collector_paused(monkeypatch, page):
    before, after = _pair()
    seen = []
    real = pages.render

    def render(template, **context):
        seen.append(gc.isenabled())
        return real(template, **context)

    monkeypatch.setattr(pages, "render", render)
    assert gc.isenabled()
    if page == "run":
        pages.run_page(before)
    else:
        pages.compare_page(before, after, compare_runs(before, after))
    assert seen == [False]
    assert gc.isenabled()  # on again afterwards
