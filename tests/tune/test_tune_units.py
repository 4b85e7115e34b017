"""Units of ``caliper.tune``: the split, the description rewrite, candidate checks, the
proposer's answer parsing, probe scoring."""

from __future__ import annotations

from pathlib import Path

import pytest

from caliper.spec.frontmatter import check_skill_file
from caliper.tune.description import (
    FrontmatterEditError,
    description_problems,
    replace_description,
)
from caliper.tune.measure import ProbeScore, rates
from caliper.tune.probes import Probe
from caliper.tune.proposer import Failures, build_prompt, parse_descriptions
from caliper.tune.split import split_probes, stratum

T = "mine"


def probes(trigger: int, other: int, rival: int = 0) -> list[Probe]:
    out = [Probe(f"t{i}", f"do mine {i}", should_trigger=True) for i in range(trigger)]
    out += [Probe(f"o{i}", f"other {i}", should_trigger=False) for i in range(other)]
    out += [Probe(f"r{i}", f"rival {i}", activates=("rival",)) for i in range(rival)]
    return out


# split -------------------------------------------------------------------------------------
def test_split_is_stratified_and_keeps_every_kind_on_both_sides() -> None:
    split = split_probes(probes(5, 5, 3), T, seed=0, test_fraction=0.4)
    for side, counts in ((split.train, (3, 3, 2)), (split.test, (2, 2, 1))):
        kinds = [stratum(p, T) for p in side]
        assert (
            kinds.count("should-trigger"),
            kinds.count("should-not"),
            kinds.count("activates:rival"),
        ) == counts
    assert {p.name for p in split.train} | {p.name for p in split.test} == {
        p.name for p in probes(5, 5, 3)
    }
    assert not {p.name for p in split.train} & {p.name for p in split.test}


def test_split_is_seeded() -> None:
    all_probes = probes(10, 10)
    a = split_probes(all_probes, T, seed=7)
    assert a == split_probes(all_probes, T, seed=7)
    assert {p.name for p in a.test} != {p.name for p in split_probes(all_probes, T, seed=8).test}


def test_a_lone_probe_of_a_kind_stays_in_train() -> None:
    split = split_probes(probes(1, 4), T, seed=0)
    assert [p.name for p in split.train if p.should_trigger] == ["t0"]


def test_an_activates_set_holding_only_the_target_counts_as_should_trigger() -> None:
    assert stratum(Probe("a", "x", activates=(T,)), T) == "should-trigger"
    assert stratum(Probe("a", "x", activates=()), T) == "should-not"


# probe scoring ------------------------------------------------------------------------------
def test_probe_correctness() -> None:
    assert Probe("a", "x", should_trigger=True).correct(T, [T, "rival"])
    assert not Probe("a", "x", should_trigger=False).correct(T, [T])
    assert Probe("a", "x", should_trigger=False).correct(T, ["rival"])
    assert not Probe("a", "x", activates=(T,)).correct(T, [T, "rival"])  # exact set
    assert Probe("a", "x", activates=("rival",)).correct(T, ["rival"])


def test_rates_count_attempts_for_recall_and_precision_and_probes_for_accuracy() -> None:
    scores = [
        ProbeScore(
            Probe("t", "x", should_trigger=True), observed=4, correct=3, fired=3, unobserved=0
        ),
        ProbeScore(
            Probe("o", "y", should_trigger=False), observed=2, correct=1, fired=1, unobserved=2
        ),
    ]
    r = rates(scores, T, 0.95)
    assert (r.recall, r.precision) == (3 / 4, 3 / 4)
    assert r.accuracy == pytest.approx((3 / 4 + 1 / 2) / 2)
    # the interval every rate is shown with, continuity-corrected Wilson: R's
    # prop.test(3, 4)$conf.int = 0.2194, 0.9868 (the plain Wilson 0.3006-0.9544 covers less)
    assert r.recall_interval.method == "wilson-cc"
    assert r.recall_interval.low == pytest.approx(0.2194, abs=5e-4)
    assert r.recall_interval.high == pytest.approx(0.9868, abs=5e-4)


# description limits ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "is empty"),
        ("   ", "is empty"),
        ("x" * 1025, "1025 characters long; the limit is 1024"),
        ("Use for <b>bold</b> requests", "XML tag"),
        ("Use <example/> here", "XML tag"),
        ("two\nlines", "several lines"),
    ],
)
def test_description_problems(text: str, problem: str) -> None:
    assert any(problem in p for p in description_problems(text))


@pytest.mark.parametrize(
    "text", ["x" * 1024, "Compare a < b and b > c", "Use for PDFs: forms & tables"]
)
def test_usable_descriptions(text: str) -> None:
    assert description_problems(text) == []


# rewriting SKILL.md -------------------------------------------------------------------------
NEW = 'Totals "invoices": sums, VAT # not a comment'


@pytest.mark.parametrize(
    ("before", "old_value"),
    [
        ("description: Old one.\n", "description: Old one.\n"),
        ("description: 'Old: quoted'\n", "description: 'Old: quoted'\n"),
        (
            "description: >-\n  Folded over\n  two lines.\n",
            "description: >-\n  Folded over\n  two lines.\n",
        ),
        ("description: |\n  Literal\n\n  block\n", "description: |\n  Literal\n\n  block\n"),
        ("description:   Plain\n  continued\n", "description:   Plain\n  continued\n"),
    ],
)
def test_replace_description_changes_only_the_value(
    tmp_path: Path, before: str, old_value: str
) -> None:
    head = "---\nname: mine\n# keep this comment\n"
    tail = "license: MIT\nmetadata:\n  a: b\n---\n# Body\n\n  keep   spacing  \n"
    text = head + before + tail
    result = replace_description(text, NEW)
    assert (
        result == head + 'description: "Totals \\"invoices\\": sums, VAT # not a comment"\n' + tail
    )
    skill = tmp_path / "mine" / "SKILL.md"
    skill.parent.mkdir()
    skill.write_text(result, encoding="utf-8")
    assert check_skill_file(skill).frontmatter.description == NEW
    assert old_value in text


def test_replace_description_keeps_crlf_line_endings() -> None:
    text = "---\r\nname: mine\r\ndescription: Old\r\n---\r\nBody\r\n"
    assert (
        replace_description(text, "New")
        == '---\r\nname: mine\r\ndescription: "New"\r\n---\r\nBody\r\n'
    )


def test_replace_description_keeps_a_blank_line_before_the_next_key() -> None:
    text = "---\ndescription: Old\n\nname: mine\n---\n"
    assert replace_description(text, "New") == '---\ndescription: "New"\n\nname: mine\n---\n'


def test_replace_description_ignores_description_in_the_body() -> None:
    text = "---\nname: mine\ndescription: Old\n---\ndescription: not frontmatter\n"
    assert replace_description(text, "New").endswith("---\ndescription: not frontmatter\n")


@pytest.mark.parametrize("text", ["no frontmatter\n", "---\nname: x\n", "---\nname: x\n---\n"])
def test_replace_description_refuses_what_it_cannot_find(text: str) -> None:
    with pytest.raises(FrontmatterEditError):
        replace_description(text, "New")


# proposer ---------------------------------------------------------------------------------------
def test_parse_descriptions_from_fenced_bare_and_broken_answers() -> None:
    fenced = 'Sure!\n```json\n{"descriptions": ["a", "b", 3]}\n```\nThanks'
    assert parse_descriptions(fenced) == ["a", "b"]
    assert parse_descriptions('{"descriptions": ["only"]}') == ["only"]
    assert parse_descriptions("no json here") is None
    assert parse_descriptions('{"other": []}') is None
    assert parse_descriptions(None) is None


def test_the_prompt_names_the_failures_and_the_limits() -> None:
    failures = Failures(missed=(("total my invoice", 2, 3),), false_fires=(("write a poem", 1, 3),))
    prompt = build_prompt("mine", "Old.", failures, 3, tried=["Older."])
    assert "[caliper-tune-proposal]" in prompt
    assert "Current description: Old.\n" in prompt
    assert '"total my invoice" (2 of 3 attempts)' in prompt
    assert '"write a poem" (1 of 3 attempts)' in prompt
    assert '"Older."' in prompt and "1024 characters" in prompt and "no XML tags" in prompt


def test_a_backend_that_cannot_answer_prompts_is_a_usage_error(tmp_path: Path) -> None:
    from caliper.errors import UsageError
    from caliper.host.engine import Engine
    from caliper.plugin.backend import Backend
    from caliper.tune.proposer import propose

    class NoPrompts(Backend):
        id = "no-prompts"
        cli_name = "true"

        def run_attempt(self, request):  # pragma: no cover - never called
            raise AssertionError

    with pytest.raises(UsageError) as caught:
        propose(Engine(NoPrompts(), None), T, "Old.", Failures(), 2, tried=[], workspace=tmp_path)
    assert "cannot be used as a judge engine" in caught.value.message
    assert "--proposer-model" in caught.value.hint


# candidate copy ----------------------------------------------------------------------------
def test_the_candidate_copy_follows_the_installers_rules(tmp_path: Path) -> None:
    """The candidate carries the skill's files, not its specs or results; a link leaving the
    skill's tree refuses it, naming the link."""
    from caliper.tune.measure import Neighbourhood, write_candidate

    skill = tmp_path / "skill"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: mine\ndescription: old\n---\nBody\n")
    (skill / "scripts" / "run.sh").write_text("echo hi\n")
    (skill / "mine.eval.yaml").write_text("tasks: []\n")
    (skill / ".caliper" / "results").mkdir(parents=True)
    (skill / ".caliper" / "results" / "r.json").write_text("{}")
    copy = write_candidate(Neighbourhood(skill, "mine"), "new words", tmp_path / "out")

    assert copy == tmp_path / "out" / "mine"
    assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*")) == [
        "SKILL.md",
        "scripts",
        "scripts/run.sh",
    ]
    assert 'description: "new words"' in (copy / "SKILL.md").read_text()
    assert (skill / "SKILL.md").read_text() == "---\nname: mine\ndescription: old\n---\nBody\n"

    secret = tmp_path / "outside.txt"
    secret.write_text("not the skill's\n")
    (skill / "leak.txt").symlink_to(secret)
    from caliper.errors import CaliperError

    with pytest.raises(CaliperError, match=r"leak\.txt is a link to"):
        write_candidate(Neighbourhood(skill, "mine"), "new words", tmp_path / "out2")
    assert not (tmp_path / "out2" / "mine" / "leak.txt").exists()
