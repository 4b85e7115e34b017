"""``caliper clean``: remove what killed caliper runs left behind."""

from __future__ import annotations

import click

from caliper.errors import CaliperError
from caliper.system.ledger import clean_dead, ledger_folder, location

EPILOG = """\b
Every caliper process notes in a ledger, before making them, the sandbox folders it makes,
the private files it writes into them (generated configs holding resolved ${VAR} secrets,
copied logins) and the agent processes it starts. A run killed with SIGKILL (or a crash, a
power cut) cannot remove them; the next `caliper run` (a --resume too) does, and so does this
command. Only ledgers whose process is gone are cleaned (a live run holds a lock on its
ledger); an agent process is ended only when it is provably the one the dead run started
(the same pid and start time, or it carries that run's environment marker) or one of its
descendants, never a process that merely reuses a pid.

\b
The ledgers are in $CALIPER_TMPDIR/.caliper-ledger-UID (or the system temp folder's), so run
this with the CALIPER_TMPDIR the killed run had.

\b
Exit codes: 0 (also when there was nothing to clean); 1 a leftover could not be removed (the
message names it).
"""


@click.command(name="clean", epilog=EPILOG)
def command() -> None:
    """Remove the sandboxes and secret files of killed caliper runs and end their agents.

    Prints one line per kind of thing removed, with counts.
    """
    try:
        base = location()
        cleaned = clean_dead(base)
    except OSError as exc:
        raise CaliperError(
            f"Cannot clean: the sandbox folder cannot be used ({exc.strerror or exc}).",
            hint="Check CALIPER_TMPDIR.",
            exit_code=1,
        ) from exc
    lines = cleaned.lines()
    for line in lines:
        click.echo(line)
    if not cleaned.runs:
        click.echo(
            f"Nothing to clean: no killed caliper run left anything in {ledger_folder(base)}."
        )
    elif not lines:
        click.echo(f"Nothing to clean: {cleaned.runs} ended caliper run(s) left nothing behind.")
    if cleaned.problems:
        raise click.exceptions.Exit(1)
