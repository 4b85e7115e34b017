"""``caliper migrate SPEC...``: convert specs and history files of the earlier tool (PyPI's
``caliper-eval`` up to 0.21) into this format, keeping every original (``docs/migration.md``)."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import click

from caliper.errors import CaliperError, UsageError
from caliper.results import store
from caliper.results.store import ResultsWriteError
from caliper.spec.migrate import NotASpec, plan_migration
from caliper.system.os_errors import describe_os_error

EPILOG = """\b
Examples:
  caliper migrate my-skill.eval.yaml --dry-run   # show the diff, write nothing
  caliper migrate my-skill.eval.yaml             # rewrite in place, keep FILE.orig
  caliper migrate evals/                         # every *.eval.yaml under evals/

\b
What changes: a history file in the earlier format (a list of turns) is
written in the `turns:` format; its `/NAME` user turns (NAME a declared skill)
are expanded into that skill's instructions, read from its SKILL.md now; the
spec keys this format does not take (`skill:`, `judge:`, a task's `id:`, …)
are removed or rewritten, the rest of the spec's text is kept as it is.
Each file is rewritten atomically after its original is copied to FILE.orig
(FILE.orig.2, … if that exists). A file already in this format is left alone.
Saved runs of the earlier tool need no migration: `list`, `report` and
`compare` read them as they are.

\b
Exit codes:
  0    migrated (or nothing to migrate); with --dry-run, the diff was shown
  1    something must be finished by hand (each one is listed; the files that
       could be converted were), or a file could not be written
  2    bad usage: a SPEC that is missing or cannot be read as a spec
"""


@click.command(name="migrate", epilog=EPILOG)
@click.argument("specs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--dry-run", is_flag=True, help="Show what would change as a diff; write nothing.")
def command(specs: tuple[Path, ...], dry_run: bool) -> None:
    """Convert specs and history files of the earlier caliper-eval (0.21 and before)."""
    files = _spec_files(specs)
    plans = []
    seen: set[Path] = set()
    for path in files:
        try:
            plans.append(plan_migration(path, seen_histories=seen))
        except NotASpec as exc:
            raise UsageError(str(exc), hint="Name a .eval.yaml spec or a folder of them.") from None
    manual = [line for plan in plans for line in plan.manual]
    changed = [change for plan in plans for change in plan.changes]
    for plan in plans:
        for note in plan.notes:
            if not any(note in change.why for change in plan.changes):
                click.echo(f"Note: {note}")
    if dry_run:
        _show_diff(changed)
    else:
        _apply(changed)
    if not changed and not manual:
        click.echo("Nothing to migrate: " + ", ".join(str(p) for p in files) + ".")
    if manual:
        click.echo("To finish by hand:", err=True)
        for line in manual:
            click.echo(f"  - {line}", err=True)
        raise click.exceptions.Exit(1)
    if changed and not dry_run:
        click.echo("Check the result with: caliper validate " + " ".join(str(p) for p in files))


def _spec_files(specs: tuple[Path, ...]) -> list[Path]:
    files: list[Path] = []
    for spec in specs:
        if spec.is_dir():
            found = sorted(
                p
                for p in spec.rglob("*.eval.yaml")
                if not any(part.startswith(".") for part in p.relative_to(spec).parts)
            )
            if not found:
                raise UsageError(f"{spec}: no *.eval.yaml spec in this folder.")
            files += found
        elif not spec.exists():
            raise UsageError(f"{spec}: no such file or folder.")
        else:
            files.append(spec)
    return list(dict.fromkeys(files))


def _show_diff(changes: list) -> None:
    for change in changes:
        click.echo(f"Would rewrite {change.path} ({'; '.join(change.why)}):")
        diff = difflib.unified_diff(
            change.old.splitlines(keepends=True),
            change.new.splitlines(keepends=True),
            fromfile=f"{change.path} (now)",
            tofile=f"{change.path} (migrated)",
        )
        for line in diff:
            click.echo(line, nl=not line.endswith("\n"))
    if changes:
        click.echo("Nothing was written (--dry-run).")


def backup_path(path: Path) -> Path:
    """Where the original of ``path`` is kept: ``FILE.orig``, or the first free ``.orig.N``."""
    candidate = path.with_name(path.name + ".orig")
    n = 2
    while candidate.exists() or candidate.is_symlink():
        candidate = path.with_name(f"{path.name}.orig.{n}")
        n += 1
    return candidate


def _apply(changes: list) -> None:
    """Copy each original to its backup, then replace it with the migrated text (both
    atomically), so no step can leave a file half-written or lose the original."""
    for change in changes:
        target = Path(os.path.realpath(change.path))  # a symlinked spec keeps its link
        backup = backup_path(target)
        try:
            store.write_atomic(backup, change.old)
            store.write_atomic(target, change.new)
        except ResultsWriteError as exc:
            cause = exc.__cause__
            why = describe_os_error(cause) if isinstance(cause, OSError) else str(exc)
            raise CaliperError(
                f"Could not migrate {change.path}: {why}. It is unchanged.",
                hint="Fix the folder's permissions or free some space, then run "
                "`caliper migrate` again (the files migrated above keep their .orig).",
            ) from None
        shown = os.path.relpath(backup) if not os.path.isabs(change.path) else backup
        click.echo(f"Migrated {change.path} (original kept as {shown}): {'; '.join(change.why)}.")
