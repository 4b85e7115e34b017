"""The bundled skills (``skills/*/SKILL.md``) say only true things about Caliper.

An agent follows these files to drive Caliper for a user, so a command or flag they name that
does not exist, or an outcome rule that differs from docs/results.md, sends it wrong. Checked:

* every ``caliper CMD`` they name is a command, and every ``--flag`` is in the real CLI's
  ``caliper CMD --help`` for the command it is written with (in the same code span or code
  line; a bare ```--flag``` belongs to the last command named before it in the same paragraph
  or list item, else to any command);
* every outcome name they use is one docs/results.md defines, and their outcome table lists
  exactly the doc's outcomes, each counted the way the doc's "in the success rate?" column
  says (a success, a failure, unusable, or none; and under which flag), read from the doc;
* the spec template grill-skill writes is one ``caliper validate`` accepts, and the skills'
  own spec (skills/caliper-skills.eval.yaml) validates with no check that passes unearned.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from caliper.cli import cli
from caliper.testing.harness import caliper_executable

ROOT = Path(__file__).resolve().parents[2]
SKILLS = ROOT / "skills"
RESULTS_DOC = ROOT / "docs" / "results.md"
BUNDLED = ("evaluate-skill", "grill-skill")

_SPAN = re.compile(r"`([^`\n]+)`")
_COMMAND = re.compile(r"(?<![\w/.-])caliper\s+(--?[a-z][-\w]*|[a-z][-\w]*)")
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
_SNAKE = re.compile(r"^[a-z]+(?:_[a-z]+)+$")
_ROW = re.compile(r"^\|\s*`([a-z_]+)`\s*\|(.*)\|\s*$")


# --- what the CLI really has ---------------------------------------------------------------


def help_flags(help_text: str) -> set[str]:
    """The long flags a ``--help`` text's Options section defines (not those its prose names)."""
    options = help_text.split("\nOptions:\n", 1)[1]
    flags: set[str] = set()
    for line in options.splitlines():
        if re.match(r"^  -", line):  # an option's own line: "  -o, --output FILE   text..."
            flags |= set(_FLAG.findall(line.strip().split("  ")[0]))
        elif line and not line.startswith(" "):
            break
    return flags


def cli_flags() -> dict[str, set[str]]:
    """``command -> the long flags its real ``caliper CMD --help`` lists`` ("" is the group)."""
    ctx = click.Context(cli)
    flags: dict[str, set[str]] = {}
    for name in ("", *cli.list_commands(ctx)):
        args = [name, "--help"] if name else ["--help"]
        result = CliRunner().invoke(cli, args, terminal_width=200)
        assert result.exit_code == 0, result.output
        flags[name] = help_flags(result.output)
    return flags


# --- what a SKILL.md says --------------------------------------------------------------------


@dataclass(frozen=True)
class Mention:
    """A flag a file names, and the command it is written with (None: no command in sight)."""

    flag: str
    command: str | None
    where: str


def _snippets(paragraph: str, fenced: bool) -> list[str]:
    """The code a paragraph holds: every line of a fenced block, else its `code spans`."""
    return paragraph.splitlines() if fenced else _SPAN.findall(paragraph)


def _paragraphs(text: str) -> list[tuple[str, bool]]:
    """Blocks of ``text``: paragraphs and list items (a fenced block is one), each with whether
    it is fenced code."""
    blocks: list[tuple[str, bool]] = []
    for i, part in enumerate(re.split(r"^```[^\n]*\n", text, flags=re.M)):
        if i % 2:
            blocks.append((part, True))
        else:
            items = re.split(r"\n\s*\n|\n(?=\s*(?:[-*]|\d+\.) )", part)
            blocks.extend((p, False) for p in items if p.strip())
    return blocks


def mentions(text: str) -> tuple[list[tuple[str, str]], list[Mention]]:
    """The ``(command, snippet)`` pairs and the flag mentions of a markdown text."""
    commands: list[tuple[str, str]] = []
    flags: list[Mention] = []
    for paragraph, fenced in _paragraphs(text):
        last: str | None = None
        for snippet in _snippets(paragraph, fenced):
            found = list(_COMMAND.finditer(snippet))
            for match in found:
                word = match.group(1)
                name = "" if word.startswith("-") else word
                commands.append((name, snippet))
            cuts = [(m.start(), "" if m.group(1).startswith("-") else m.group(1)) for m in found]
            for flag in _FLAG.finditer(snippet):
                before = [name for start, name in cuts if start < flag.start()]
                command = before[-1] if before else last
                if flag.group(1) in {m.group(1) for m in found}:
                    command = ""  # `caliper --version`: a flag of the group itself
                flags.append(Mention(flag.group(1), command, snippet))
            if cuts:
                last = cuts[-1][1]
    return commands, flags


def flag_problems(text: str, known: dict[str, set[str]]) -> list[str]:
    """Every command the text names that Caliper lacks, and every flag its command lacks."""
    commands, flags = mentions(text)
    problems = [
        f"`caliper {name}` is not a caliper command (in `{snippet}`)"
        for name, snippet in commands
        if name not in known
    ]
    everywhere = set().union(*known.values())
    for mention in flags:
        if mention.command is None:
            if mention.flag not in everywhere:
                problem = f"{mention.flag} is no caliper command's flag (in `{mention.where}`)"
                problems.append(problem)
        elif mention.command in known and mention.flag not in known[mention.command]:
            shown = f"caliper {mention.command}".strip()
            problems.append(f"`{shown} --help` has no {mention.flag} (in `{mention.where}`)")
    return problems


# --- the outcome rules -----------------------------------------------------------------------


def outcome_table(text: str, heading: str | None = None) -> dict[str, str]:
    """``outcome -> the cell saying how it counts`` from the text's table of outcomes (the one
    under ``heading`` when given): rows whose first cell is a `code` name, last cell the rule."""
    if heading is not None:
        text = text.split(heading, 1)[1].split("\n#", 1)[0]
    rows: dict[str, str] = {}
    for line in text.splitlines():
        match = _ROW.match(line.strip())
        if match:
            rows[match.group(1)] = match.group(2).split("|")[-1].strip()
    return rows


def how_it_counts(cell: str) -> tuple[bool, str, frozenset[str]]:
    """What a rule cell says: in the rate or not, as what (success, failure, unusable, none),
    and the flags it names (e.g. ``--timeouts``)."""
    lowered = cell.lower()
    counted = lowered.startswith("yes")
    kind = next((k for k in ("success", "failure", "unusable") if k in lowered), "none")
    return counted, kind, frozenset(_FLAG.findall(cell))


def doc_outcomes() -> dict[str, str]:
    """docs/results.md's outcome table (### Outcomes)."""
    table = outcome_table(RESULTS_DOC.read_text(encoding="utf-8"), "### Outcomes")
    assert len(table) >= 5, f"docs/results.md's outcome table was not found: {table}"
    return table


def outcome_problems(text: str, doc: dict[str, str], backticked: set[str]) -> list[str]:
    """Outcome names the text uses that the doc does not define, and every row of its outcome
    table that counts an outcome otherwise than the doc does (``backticked``: the names the
    docs use in `code`, so field names such as `score_interval` are not taken for outcomes)."""
    problems = [
        f"`{token}` is not an outcome docs/results.md defines"
        for token in sorted(set(_SPAN.findall(text)))
        if _SNAKE.match(token) and token not in doc and token not in backticked
    ]
    table = outcome_table(text)
    if not table:
        return problems
    for name in sorted(set(doc) - set(table)):
        problems.append(f"the outcome table leaves out `{name}`")
    for name, cell in table.items():
        if name not in doc:
            problems.append(f"the outcome table lists `{name}`, which docs/results.md does not")
        elif how_it_counts(cell) != how_it_counts(doc[name]):
            problems.append(
                f"`{name}`: the skill says {how_it_counts(cell)} ({cell!r}), "
                f"docs/results.md says {how_it_counts(doc[name])} ({doc[name]!r})"
            )
    return problems


def docs_code_names() -> set[str]:
    """Every snake_case name the docs write in `code` (fields, keys, outcomes)."""
    names: set[str] = set()
    for page in (ROOT / "docs").rglob("*.md"):
        names |= {t for t in _SPAN.findall(page.read_text(encoding="utf-8")) if _SNAKE.match(t)}
    return names


# --- the bundled skills ----------------------------------------------------------------------


def _skill_text(name: str) -> str:
    return (SKILLS / name / "SKILL.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", BUNDLED)
def test_every_command_and_flag_a_bundled_skill_names_exists(name):
    assert flag_problems(_skill_text(name), cli_flags()) == []


@pytest.mark.parametrize("name", BUNDLED)
def test_a_bundled_skill_states_the_outcome_rules_of_docs_results(name):
    assert outcome_problems(_skill_text(name), doc_outcomes(), docs_code_names()) == []


def test_evaluate_skill_has_the_outcome_table():
    """evaluate-skill is the one that reports results: it lists every outcome's rule."""
    assert set(outcome_table(_skill_text("evaluate-skill"))) == set(doc_outcomes())


def test_the_spec_template_of_grill_skill_validates(tmp_path):
    """The YAML grill-skill shows is a spec `caliper validate` accepts, given its two skills."""
    (template,) = re.findall(r"^```yaml\n(.*?)^```", _skill_text("grill-skill"), re.M | re.S)
    for skill in ("my-skill", "neighbour"):
        (tmp_path / skill).mkdir()
        (tmp_path / skill / "SKILL.md").write_text(
            f"---\nname: {skill}\ndescription: A stand-in for {skill}.\n---\n\nBody.\n"
        )
    (tmp_path / "my-skill.eval.yaml").write_text(template)
    out = subprocess.run(
        [str(caliper_executable()), "validate", str(tmp_path / "my-skill.eval.yaml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_bundled_skills_own_spec_is_valid_and_its_checks_can_fail():
    """skills/caliper-skills.eval.yaml validates, and `--probe` finds no check that passes with
    no agent (it runs the spec's setup: and assert: code, never an agent CLI)."""
    spec = SKILLS / "caliper-skills.eval.yaml"
    out = subprocess.run(
        [str(caliper_executable()), "validate", "--probe", str(spec)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 flagged" in out.stdout, out.stdout


# --- the checks can fail ---------------------------------------------------------------------


def test_the_flags_are_read_from_the_options_section_of_the_help():
    known = cli_flags()
    assert {"--k", "--timeouts", "--ablate", "--min-score"} <= known["run"]
    assert "--no-user-customizations" in known["run"]  # the off form of a switch
    assert {"--format", "--output"} <= known["report"] and "--explain" in known["compare"]
    assert "--probe" in known["validate"] and "--version" in known[""]
    assert "--resume" not in known["retry"]  # retry's help names it only in its prose


def test_a_made_up_flag_or_command_is_caught():
    known = cli_flags()
    text = (
        "Run `caliper run SPEC --k 3 --no-such-flag`, then `caliper frobnicate`.\n\n"
        "Or, for a page, `caliper report RUN --format html`, adding `--explain`.\n\n"
        "A bare `--also-made-up` is caught too, and `caliper --version` is fine.\n"
    )
    problems = flag_problems(text, known)
    assert any("--no-such-flag" in p and "caliper run --help" in p for p in problems), problems
    assert any("caliper frobnicate" in p for p in problems), problems
    # --explain is compare's, not report's: the paragraph's command is report
    assert any("--explain" in p and "caliper report --help" in p for p in problems), problems
    assert any("--also-made-up" in p for p in problems), problems
    assert len(problems) == 4, problems  # --k, --format and `caliper --version` are real


def test_a_flag_in_a_code_block_belongs_to_its_line():
    text = "```bash\ncaliper validate --probe x.eval.yaml\ncaliper compare A B --probe\n```\n"
    assert flag_problems(text, cli_flags()) == [
        "`caliper compare --help` has no --probe (in `caliper compare A B --probe`)"
    ]


def test_a_wrong_outcome_rule_is_caught():
    doc = doc_outcomes()
    names = docs_code_names()
    rows = {name: f"| `{name}` | {cell} |" for name, cell in doc.items()}
    good = "| outcome | counts? |\n| --- | --- |\n" + "\n".join(rows.values()) + "\n"
    assert outcome_problems(good, doc, names) == []

    not_counted = good.replace(rows["timeout"], "| `timeout` | no: unusable |")
    assert any("`timeout`" in p for p in outcome_problems(not_counted, doc, names))
    no_flag = good.replace(rows["timeout"], "| `timeout` | yes, a failure, or unusable |")
    assert any("`timeout`" in p for p in outcome_problems(no_flag, doc, names))
    missing = good.replace(rows["judge_error"] + "\n", "")
    assert "the outcome table leaves out `judge_error`" in outcome_problems(missing, doc, names)
    invented = good + "| `rate_limited` | no: unusable |\n"
    assert any("`rate_limited`" in p for p in outcome_problems(invented, doc, names))
    assert outcome_problems("Retry the `judge_failure` ones.", doc, names) == [
        "`judge_failure` is not an outcome docs/results.md defines"
    ]
