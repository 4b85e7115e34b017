"""``caliper update-cli``: compare each backend's installed agent CLI with the newest release."""

from __future__ import annotations

import json
import shlex
import subprocess

import attrs
import click

from caliper.errors import CaliperError
from caliper.host.engine import find_backend
from caliper.host.plugins import PluginHost
from caliper.plugin.backend import CliUpdate


def gather_updates(
    host: PluginHost, backend_ids: list[str], *, check_latest: bool
) -> list[CliUpdate]:
    """Ask each backend about its CLI: ``Backend.update_info`` first, then (for plugins that
    answer through it) the ``cli_update_info`` hook."""
    if backend_ids:
        chosen = [find_backend(host, name, flag="update-cli") for name in backend_ids]
    else:
        backends = host.backends()
        chosen = [backends[b] for b in sorted(backends)]
    updates = []
    for backend in chosen:
        info = backend.update_info(check_latest)
        if info is None:
            info = host.call_first("cli_update_info", backend=backend, check_latest=check_latest)
        if info is None:
            cli = backend.cli_info()
            info = CliUpdate(
                backend=backend.id,
                installed=cli.version,
                latest=None,
                update_command=None,
                note="this backend reports no update info",
            )
        updates.append(info)
    return updates


@click.command(name="update-cli")
@click.argument("backends", nargs=-1)
@click.option("--check", is_flag=True, help="Only report versions; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Same as the other commands' --format; json is the same as --json.",
)
@click.option("--yes", is_flag=True, help="Run the update commands without asking.")
def command(
    backends: tuple[str, ...], check: bool, as_json: bool, output_format: str, yes: bool
) -> None:
    """Check (and with confirmation, update) the agent CLIs of installed backends.

    With no BACKENDS, every installed backend is asked. Finding the newest version may
    query the package registry; CLIs that update themselves are only reported.

    \b
    Examples:
      caliper update-cli --check          # report only
      caliper update-cli codex --yes      # update codex's CLI without asking

    \b
    Exit codes:
      0  versions were reported (and any accepted update succeeded)
      1  an update command failed
      2  a named backend is not installed
    """
    host = PluginHost()
    updates = gather_updates(host, list(backends), check_latest=True)
    as_json = as_json or output_format == "json"
    if as_json:
        click.echo(
            json.dumps([{**attrs.asdict(u), "outdated": u.outdated} for u in updates], indent=2)
        )
    else:
        for update in updates:
            for line in _text_lines(update):
                click.echo(line)
    if check:
        return
    for update in updates:
        if not update.update_command or update.self_updating:
            continue
        if not (update.outdated or update.installed is None):
            continue
        if not yes and not click.confirm(f"Run `{update.update_command}`?", default=False):
            continue
        result = subprocess.run(shlex.split(update.update_command), check=False)
        if result.returncode != 0:
            raise CaliperError(
                f"`{update.update_command}` failed with exit code {result.returncode}."
            )


def _text_lines(update: CliUpdate) -> list[str]:
    """One backend's lines: its CLI's state, a note, and the command that installs or updates
    it when that is what to do next."""
    if update.installed is None:
        line = f"{update.backend}: not installed"
        if update.latest:
            line += f" (newest release: {update.latest})"
        verb = "install with"
    else:
        state = "up to date" if not update.outdated else f"update available: {update.latest}"
        if update.latest is None:
            state = "newest version unknown"
        line = f"{update.backend}: installed {update.installed}, {state}"
        verb = "update with"
    if update.self_updating and update.installed is not None:
        line += " (updates itself)"
    lines = [line]
    if update.note:
        lines.append(f"  {update.note}")
    wanted = update.outdated or update.installed is None
    updater_missing = update.installed is None and update.self_updating  # its updater is gone
    if update.update_command and wanted and not updater_missing:
        lines.append(f"  {verb}: {update.update_command}")
    return lines
