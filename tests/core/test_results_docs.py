"""docs/results.md documents every field of every saved class and every derived field."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from caliper.plugin.attempt import Turn, Usage
from caliper.results.compare import RunComparison, SkillDrift, TaskComparison, UsageDelta
from caliper.results.models import (
    AttemptRecord,
    CheckRecord,
    RunMeta,
    RunResults,
    SkillSnapshot,
    TaskResult,
    TryRecord,
)
from caliper.results.scoring import SkillActivation, TaskScore, UsageTotals

DOC = Path(__file__).parents[2] / "docs" / "results.md"


def section(title: str) -> str:
    text = DOC.read_text()
    match = re.search(rf"^### {re.escape(title)}\n(.*?)(?=^### |\Z)", text, re.M | re.S)
    assert match, f"docs/results.md has no section {title!r}"
    return match.group(1)


@pytest.mark.parametrize(
    "cls",
    [
        RunResults,
        RunMeta,
        SkillSnapshot,
        TaskResult,
        AttemptRecord,
        TryRecord,
        Usage,
        Turn,
        CheckRecord,
    ],
)
def test_every_saved_field_is_documented(cls):
    body = section(f"`{cls.__name__}`")
    missing = [f.name for f in attrs.fields(cls) if f"| `{f.name}` |" not in body]
    assert not missing, f"{cls.__name__} fields missing from docs/results.md: {missing}"


@pytest.mark.parametrize("cls", [TaskScore, SkillActivation, UsageTotals])
def test_every_derived_field_is_documented(cls):
    body = section("Derived blocks")
    missing = [f.name for f in attrs.fields(cls) if f"`{f.name}`" not in body]
    assert not missing, f"{cls.__name__} fields missing from docs/results.md: {missing}"


@pytest.mark.parametrize("cls", [RunComparison, TaskComparison, UsageDelta, SkillDrift])
def test_every_compare_json_field_is_documented(cls):
    text = DOC.read_text()
    body = text[text.index("## Comparing two runs") : text.index("## The results file")]
    missing = [f.name for f in attrs.fields(cls) if f"`{f.name}`" not in body]
    assert not missing, f"{cls.__name__} fields missing from docs/results.md: {missing}"
