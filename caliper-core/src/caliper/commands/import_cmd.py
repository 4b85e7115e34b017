"""``caliper import skill-creator PATH...``: turn Anthropic skill-creator eval files into a
caliper spec (``docs/tuning.md``, "Importing from skill-creator")."""

from __future__ import annotations

from pathlib import Path

import click

from caliper.errors import UsageError
from caliper.system.output_file import write_output, writes_in_place
from caliper.tune.importer import convert, render_spec

EPILOG = """\b
Examples:
  caliper import skill-creator skills/pdf                 # skills/pdf/evals/evals.json
  caliper import skill-creator skills/pdf/evals/evals.json trigger-eval.json -o pdf.eval.yaml
  caliper import skill-creator trigger-eval.json --skill skills/pdf

\b
evals.json entries become tasks (expectations and expected_output -> expect:,
files -> a setup: that copies them from a path relative to the spec,
activates: [the skill]); trigger-eval queries become activation-only tasks.
A file given twice (a skill folder and its own evals.json) is imported once,
with a warning. Everything that could not be carried over is listed. Check
the result with `caliper validate`.

\b
Exit codes:
  0    the spec was written
  2    bad usage: an input that is not a skill-creator file, no skill to name,
       or OUT exists (pass --force)
"""


GROUP_EPILOG = """\b
Example:
  caliper import skill-creator skills/pdf -o pdf.eval.yaml
Run `caliper import skill-creator --help` for the mapping and exit codes.
"""


@click.group(name="import", epilog=GROUP_EPILOG)
def command() -> None:
    """Convert other tools' eval files into caliper specs."""


@command.command(name="skill-creator", epilog=EPILOG)
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="OUT",
    help="Where to write the spec (default: SKILL-NAME.eval.yaml in the current folder).",
)
@click.option(
    "--skill",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="The skill the evals are for (default: the folder holding the input's SKILL.md).",
)
@click.option("--force", is_flag=True, help="Overwrite OUT if it exists.")
def skill_creator(
    paths: tuple[Path, ...], output: Path | None, skill: Path | None, force: bool
) -> None:
    """Convert skill-creator's evals/evals.json and trigger-eval files into one .eval.yaml."""
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file or folder.")
    conversion = convert(list(paths), skill)
    if output is None:
        output = Path(f"{conversion.skill_name or 'imported'}.eval.yaml")
    if output.exists() and not force and not writes_in_place(output):
        raise UsageError(
            f"{output} already exists.", hint="Pass --force to overwrite it, or -o OUT."
        )
    write_output(output, render_spec(conversion, output))
    evals = sum(1 for t in conversion.tasks if "expect" in t)
    probes = len(conversion.tasks) - evals
    click.echo(f"Wrote {output}: {evals} graded task(s), {probes} activation-only task(s).")
    for warning in conversion.warnings:
        click.echo(f"Warning: {warning}.", err=True)
    if conversion.skill_dir is None:
        click.echo("No skill folder was found, so the spec has no skills: (pass --skill DIR).")
    if conversion.not_carried:
        click.echo("Not carried over:")
        for line in conversion.not_carried:
            click.echo(f"  - {line}")
    click.echo(f"Check it with: caliper validate {output}")
