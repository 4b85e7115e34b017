"""The labels a derived or resumed run carries in list, history and the pages."""

from __future__ import annotations

import pytest

from caliper.results.meta_labels import derived_kind, derived_sentence, derived_short
from caliper.results.models import RunMeta


def _meta(**fields) -> RunMeta:
    return RunMeta(
        run_id="R2", spec_name="demo", spec_path="demo.eval.yaml", started_at="T0", **fields
    )


@pytest.mark.parametrize(
    ("fields", "short", "sentence"),
    [
        (
            {"derived_by": "regrade", "parent_run": "demo/R1"},
            "regrade of R1",
            "A regrade of demo/R1 — no agent ran; the parent's attempts were graded again.",
        ),
        (
            {"derived_by": "retry", "parent_run": "demo/R1"},
            "retry of R1",
            "A retry of demo/R1 — only the parent's failed attempts were run again; the rest"
            " are copied from it.",
        ),
        (
            {"derived_by": "review", "parent_run": "demo/R1"},
            "review of R1",
            "A review of demo/R1 — no agent ran; a person set the verdicts of some of the"
            " parent's attempts.",
        ),
        (
            {"merged_from": [{"run": "S1"}, {"run": "S2"}]},
            "merged (2 shards)",
            "A merge of 2 shard runs (S1, S2) — no agent ran; the shard runs' attempts were"
            " joined.",
        ),
        (
            {"resumed_at": ["2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z"]},
            "resumed 2×",
            "Resumed 2 times after a stop (last at 2026-12-01T11:00:00Z).",
        ),
        (
            {"derived_by": "retry", "parent_run": "demo/R1", "resumed_at": ["T1"]},
            "retry of R1, resumed",
            "A retry of demo/R1 — only the parent's failed attempts were run again; the rest"
            " are copied from it. Resumed once after a stop (last at T1).",
        ),
        ({}, None, None),
    ],
    ids=["regrade", "retry", "review", "merge", "resume", "retry-resumed", "ordinary"],
)
def test_each_way_of_making_a_run_is_labelled_with_its_parent(fields, short, sentence):
    meta = _meta(**fields)
    assert derived_short(meta) == short
    assert derived_sentence(meta) == sentence


def test_a_merge_saved_before_derived_by_is_still_a_merge():
    assert derived_kind(_meta(merged_from=[{"run": "S1"}])) == "merge"
    assert derived_kind(_meta()) is None
