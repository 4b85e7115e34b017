"""``caliper plugins``: what is installed, what each plugin provides, and whether CLIs are found."""

from __future__ import annotations

import json

import click

from caliper.plugins import BACKENDS, GROUPS, JUDGES, PluginHost, installed


def collect_plugins(host: PluginHost, *, check_clis: bool = True) -> dict:
    """Everything ``caliper plugins`` reports, as plain data (also the ``--json`` output)."""
    distributions: dict[str, dict] = {}
    for group in GROUPS:
        for entry in installed(group):
            dist = distributions.setdefault(
                entry.distribution or entry.module,
                {"distribution": entry.distribution, "version": entry.version, "provides": []},
            )
            dist["provides"].append(
                {"kind": group.split(".")[-1], "id": entry.name, "module": entry.module}
            )
    for group in GROUPS:
        host.load(group)
    backends = []
    for ident, backend in sorted(host.backends().items()):
        row: dict = {
            "id": ident,
            "aliases": list(backend.aliases),
            "default_model": backend.default_model,
            "supports_mcp": backend.supports_mcp,
            "cli": backend.cli_name,
        }
        if check_clis:
            try:
                info = backend.cli_info()
                row.update(
                    cli_found=info.found,
                    cli_path=str(info.path) if info.path else None,
                    cli_version=info.version,
                    cli_error=info.error,
                )
            except Exception as exc:  # a plugin bug must not break the listing
                row.update(cli_found=False, cli_error=f"{type(exc).__name__}: {exc}")
        backends.append(row)
    judges = [
        {
            "key": key,
            "summary": judge.summary,
            "uses_llm": judge.uses_llm,
            "scores_outcome": judge.scores_outcome,
        }
        for key, judge in sorted(host.judges().items())
    ]
    failures = [
        {
            "kind": f.entry.group.split(".")[-1],
            "id": f.entry.name,
            "distribution": f.entry.distribution,
            "error": f.error,
        }
        for f in host.failures
    ]
    return {
        "distributions": sorted(distributions.values(), key=lambda d: d["distribution"] or ""),
        "backends": backends,
        "judges": judges,
        "failures": failures,
    }


def _render(data: dict, verbose: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title="Installed plugins", title_justify="left")
    for column in ("distribution", "version", "provides"):
        table.add_column(column)
    for dist in data["distributions"]:
        provides = ", ".join(f"{p['kind'][:-1]} {p['id']}" for p in dist["provides"])
        table.add_row(dist["distribution"] or "?", dist["version"] or "?", provides)
    console.print(table)
    backends = Table(title="Backends", title_justify="left")
    for column in ("id", "aliases", "MCP", "CLI"):
        backends.add_column(column)
    for row in data["backends"]:
        if row.get("cli_found"):
            cli = f"[green]{row['cli_path']}[/] {row.get('cli_version') or ''}".rstrip()
        elif "cli_found" in row:
            cli = f"[red]not found[/] ({row['cli']})"
            if verbose and row.get("cli_error"):
                cli += f"\n{row['cli_error']}"
        else:
            cli = row["cli"]
        backends.add_row(
            row["id"], ", ".join(row["aliases"]) or "-", "yes" if row["supports_mcp"] else "no", cli
        )
    console.print(backends)
    judges = Table(title="Judges (task keys)", title_justify="left")
    for column in ("key", "kind", "summary"):
        judges.add_column(column)
    for row in data["judges"]:
        kind = (
            "LLM" if row["uses_llm"] else ("scoreboard" if not row["scores_outcome"] else "local")
        )
        judges.add_row(row["key"], kind, row["summary"])
    console.print(judges)
    for failure in data["failures"]:
        console.print(
            f"[red]Failed to load[/] {failure['kind'][:-1]} {failure['id']} "
            f"({failure['distribution']}): {failure['error']}"
        )


@click.command(name="plugins")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.option("--no-cli-check", is_flag=True, help="Do not look for the agent CLIs.")
@click.option("-v", "--verbose", is_flag=True, help="Explain why a CLI was not found.")
def command(as_json: bool, no_cli_check: bool, verbose: bool) -> None:
    """List installed plugins, what each provides, and whether each backend's CLI is found.

    A plugin that fails to import is listed with its error; it never hides the others.
    Set CALIPER_LOAD_PLUGINS=name1,name2 to load only some plugins.
    """
    data = collect_plugins(PluginHost(), check_clis=not no_cli_check)
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        _render(data, verbose)


__all__ = ["BACKENDS", "JUDGES", "collect_plugins", "command"]
