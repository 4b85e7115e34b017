"""The ``caliper`` command: a click group whose subcommands are imported only when used.

Run as the console script, this module's first step, before any heavy import, puts the
process under the one stop policy (:mod:`caliper.system.stop_policy`): a Ctrl-C, ``SIGTERM`` or
``SIGHUP`` from then on is a clean exit 130/143/129, never a traceback.
"""

from __future__ import annotations

import os
import sys

from caliper.system import stop_policy

if os.path.basename(sys.argv[0] if sys.argv else "") == "caliper":
    stop_policy.install()

# after the stop policy: a Ctrl-C while importing is handled
import contextlib
import gc
import importlib
from typing import Any

import click

from caliper import __version__
from caliper.errors import CaliperError
from caliper.system.textsafe import printable

EXIT_INTERNAL = 70  # an unexpected error: a bug (sysexits' EX_SOFTWARE)
EXIT_CANNOT_WRITE = 74  # an output could not be written: a full disk (sysexits' EX_IOERR)

# name -> (module, short help shown by `caliper --help` without importing the module)
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("caliper.commands.run", "Run a spec's tasks k times through an agent CLI."),
    "validate": ("caliper.commands.validate", "Check specs for errors without running anything."),
    "report": ("caliper.commands.report", "Show a saved run again."),
    "list": ("caliper.commands.list_runs", "List specs and their saved runs."),
    "compare": ("caliper.commands.compare", "Diff two saved runs task by task."),
    "merge": ("caliper.commands.merge", "Merge the shard runs of one run into the whole run."),
    "tune": ("caliper.commands.tune", "Tune a skill's description against measured activation."),
    "import": ("caliper.commands.import_cmd", "Convert skill-creator eval files into a spec."),
    "migrate": (
        "caliper.commands.migrate",
        "Convert specs and history files of the earlier caliper-eval.",
    ),
    "retry": ("caliper.commands.retry", "Re-run the unusable attempts of a saved run."),
    "regrade": ("caliper.commands.regrade", "Judge a saved run's attempts again."),
    "review": ("caliper.commands.review", "Save a person's verdicts on a run as a new run."),
    "history": ("caliper.commands.history", "A spec's score and activation over its runs."),
    "plugins": ("caliper.commands.plugins", "List installed plugins and agent CLIs."),
    "update-cli": ("caliper.commands.update_cli", "Check or update the agent CLIs."),
    "clean": ("caliper.commands.clean", "Remove what killed runs left behind."),
}


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when that subcommand runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module_name, _ = COMMANDS[cmd_name]
        from caliper.commands.help_order import options_first

        return options_first(importlib.import_module(module_name).command)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_text) for name, (_, help_text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        name = args[0] if args else ""
        if name and name not in COMMANDS and not name.startswith("-"):
            import difflib

            close = difflib.get_close_matches(name, list(COMMANDS), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            ctx.fail(f"No such command {name!r}.{hint}")
        return super().resolve_command(ctx, args)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from caliper.host.plugins import GROUPS, installed

    click.echo(f"caliper {__version__}")
    seen: set[tuple[str | None, str | None]] = set()
    for group in GROUPS:
        for entry in installed(group):
            key = (entry.distribution, entry.version)
            if key in seen:
                continue
            seen.add(key)
            click.echo(f"  {entry.distribution} {entry.version}")
    ctx.exit()


EPILOG = """\b
Typical session:
  caliper validate my-skill.eval.yaml
  caliper run my-skill.eval.yaml --k 3
  caliper run my-skill.eval.yaml --k 3 --ablate my-skill
  caliper list my-skill.eval.yaml
  caliper compare RUN-A.json RUN-B.json

\b
Run `caliper COMMAND --help` for its options, examples and exit codes.
Every command exits 2 on bad usage, 130 on Ctrl-C (143 SIGTERM, 129
SIGHUP), 74 when an output cannot be written for a full disk, and 70 when
caliper itself failed unexpectedly (a bug; CALIPER_DEBUG=1 shows the traceback).
"""


@click.group(
    cls=LazyGroup,
    epilog=EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show caliper's version and its plugins' versions.",
)
def cli() -> None:
    """Measure whether an agent skill really works.

    Write a spec (*.eval.yaml) naming the skills to install and the tasks to try, then run
    it k times through a real coding-agent CLI. Each attempt gets a fresh, isolated home with
    the skills installed where the agent discovers them; caliper scores the success rate over
    usable attempts, which skills the agent chose to load, tokens and wall time.
    """


QUICK_EXIT_COMMANDS = frozenset({"validate", "run"})
"""Commands that, run from the console script, end without tearing the interpreter down
(:func:`caliper.system.quick_exit.exit_now`): ``validate`` writes no file and starts no thread or
child (``validate --probe`` does, so it exits as usual); ``run`` gets there only after its
results are saved (atomically), its journal closed and its report printed, and a thread
still alive makes it the usual exit."""

NO_COLLECTOR_COMMANDS = frozenset({"validate"})
"""Commands of :data:`QUICK_EXIT_COMMANDS` that also run without the cycle collector: they
make no cyclic garbage to speak of (a run of many attempts does)."""

COLLECTOR_AFTER_START_COMMANDS = frozenset({"run"})
"""Commands that start without the cycle collector (the imports and the pre-flight make
many objects and no garbage, and the collector would walk them again and again) and turn it
back on, with everything made so far frozen out of its sight, through
:func:`resume_collector` once the first agents are out."""

_collector_paused = [False]


def resume_collector() -> None:
    """Turn the cycle collector back on if :func:`main` paused it for a command's start-up
    (:data:`COLLECTOR_AFTER_START_COMMANDS`), first freezing every object there is (they
    stay for the whole process: the collector need never walk them again)."""
    if not _collector_paused[0]:
        return
    _collector_paused[0] = False
    gc.freeze()
    gc.enable()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script: runs the CLI, turning CaliperError into exit codes.

    Called without ``argv`` (as the console script calls it), a command of
    :data:`QUICK_EXIT_COMMANDS` ends the process here with its exit status, skipping the
    interpreter's teardown of every object;
    one of :data:`NO_COLLECTOR_COMMANDS` runs with Python's cycle collector paused (it would
    walk every object the command made, again and again: half the CPU of validating a
    50,000-task spec, the same peak memory without it), one of
    :data:`COLLECTOR_AFTER_START_COMMANDS` only until it calls :func:`resume_collector`."""
    if argv is None and not stop_policy.installed():
        stop_policy.install()
    command = sys.argv[1] if len(sys.argv) > 1 else None
    quick = argv is None and command in QUICK_EXIT_COMMANDS and "--probe" not in sys.argv
    if not quick:
        return _run(argv)
    paused = command in NO_COLLECTOR_COMMANDS
    if paused:
        gc.disable()
    elif command in COLLECTOR_AFTER_START_COMMANDS and gc.isenabled():
        gc.disable()
        _collector_paused[0] = True
    try:
        code = _run(argv)
    finally:
        resume_collector()  # a run refused before its first agent, or one that never resumed it
    from caliper.system.quick_exit import exit_now

    exit_now(code)
    if paused:
        gc.enable()  # the process goes on after all (see exit_now): collect as usual again
    return code


def _run(argv: list[str] | None) -> int:
    """The CLI run on ``argv`` (``sys.argv[1:]`` when ``None``); its exit status."""
    return _command_code(argv)


def _stopped(stop: stop_policy.StopSignal) -> int:
    """One line for a command ended by a stop signal; its exit code (128 + the signal)."""
    with contextlib.suppress(OSError, ValueError):  # after SIGHUP the terminal may be gone
        click.echo(f"Stopped ({stop.label}).", err=True)
    return stop.exit_code


def _command_code(argv: list[str] | None) -> int:
    """The CLI run on ``argv`` under the stop policy; its exit status. A stop signal the
    command received ends it with 128 + the signal's number whatever it returned."""
    try:
        try:
            code = _guarded(argv)
        finally:
            stop_policy.end()
    except stop_policy.StopSignal as stop:  # while the outcome was being reported
        code = _stopped(stop)
    received = stop_policy.received() if stop_policy.installed() else None
    if received is not None and code < 128:
        code = 128 + received
    return code


def _guarded(argv: list[str] | None) -> int:
    """The CLI run on ``argv``, every way it can end turned into an exit status."""
    try:
        if stop_policy.installed():
            stop_policy.begin()
        returned = cli.main(args=argv, prog_name="caliper", standalone_mode=False)
    except stop_policy.StopSignal as stop:
        return _stopped(stop)
    except CaliperError as exc:
        click.echo(f"Error: {printable(exc.render())}", err=True)
        return exc.exit_code
    except click.exceptions.Abort as exc:
        if isinstance(exc.__cause__, stop_policy.StopSignal):
            return _stopped(exc.__cause__)
        click.echo("Aborted.", err=True)
        return 130
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:  # Ctrl-C outside click's own handling
        click.echo("Aborted.", err=True)
        return 130
    except OSError as exc:
        from caliper.system.os_errors import is_full

        if isinstance(exc, FileNotFoundError) and _cwd_is_gone():
            return _cwd_gone()
        return _cannot_write(exc) if is_full(exc) else _internal_error(exc)
    except Exception as exc:  # a bug: one line and a way to see more, not a traceback
        return _internal_error(exc)
    # With standalone_mode=False, click returns the code of a `ctx.exit(code)` in a command.
    return returned if isinstance(returned, int) else 0


def _cwd_is_gone() -> bool:
    """True when the current folder no longer exists (deleted after the shell entered it)."""
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


def _cwd_gone() -> int:
    """One line for a command started in a folder that was deleted: a usage error (exit 2)."""
    shown = os.environ.get("PWD") or "the current folder"
    click.echo(
        f"Error: the current folder {shown} no longer exists (it was deleted or moved after "
        "the shell entered it), so caliper cannot find the spec or the .caliper/ folder "
        "from it.\ncd to an existing folder (e.g. `cd {}`) and run the command again.".format(
            os.path.dirname(shown.rstrip("/")) or "~"
        ),
        err=True,
    )
    return 2


def _internal_error(exc: Exception) -> int:
    """One line for a bug (``CALIPER_DEBUG=1`` re-raises it for the traceback)."""
    if os.environ.get("CALIPER_DEBUG"):
        raise exc
    click.echo(
        f"Error: caliper failed unexpectedly: {type(exc).__name__}: {printable(str(exc))}\n"
        "This is a bug in caliper or a plugin. Run again with CALIPER_DEBUG=1 to see "
        "the traceback, and please report it.",
        err=True,
    )
    return EXIT_INTERNAL


def _cannot_write(exc: OSError) -> int:
    """One line for output that could not be written because the disk is full.

    When the output that failed is standard output, whatever is still buffered for it is
    dropped (it is pointed at the null device), so the interpreter's own flush at exit does
    not fail a second time with a traceback of its own."""
    from caliper.system.os_errors import describe_os_error

    where = printable(str(exc.filename)) if exc.filename else "the output"
    if not exc.filename:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())
            os.close(null)
    with contextlib.suppress(OSError):
        click.echo(
            f"Error: could not write {where}: no space left on the device "
            f"({describe_os_error(exc)}). Free some space, or send the output elsewhere, and "
            "run again.",
            err=True,
        )
    return EXIT_CANNOT_WRITE


if __name__ == "__main__":
    sys.exit(main())
