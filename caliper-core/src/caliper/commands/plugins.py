"""``caliper plugins``: what is installed, what each plugin provides, and whether CLIs are found."""

from __future__ import annotations

import json

import click

from caliper.host.plugins import BACKENDS, GROUPS, JUDGES, PluginHost, installed


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
            "supports_mcp": backend.supports_mcp(),
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
    from rich.markup import escape
    from rich.table import Table

    from caliper.report import make_console

    console = make_console()
    table = Table(title="Installed plugins", title_justify="left")
    for column in ("distribution", "version", "provides"):
        table.add_column(column)
    for dist in data["distributions"]:
        provides = ", ".join(f"{p['kind'][:-1]} {p['id']}" for p in dist["provides"])
        table.add_row(
            escape(dist["distribution"] or "?"), escape(dist["version"] or "?"), escape(provides)
        )
    console.print(table)
    backends = Table(title="Backends", title_justify="left")
    for column in ("id", "aliases", "MCP", "CLI"):
        backends.add_column(column)
    for row in data["backends"]:
        if row.get("cli_found"):
            version = escape(row.get("cli_version") or "")
            cli = f"[green]{escape(row['cli_path'])}[/] {version}".rstrip()
        elif "cli_found" in row:
            cli = f"[red]not found[/] ({escape(row['cli'])})"
            if verbose and row.get("cli_error"):
                cli += f"\n{escape(row['cli_error'])}"
        else:
            cli = escape(row["cli"])
        backends.add_row(
            escape(row["id"]),
            escape(", ".join(row["aliases"])) or "-",
            "yes" if row["supports_mcp"] else "no",
            cli,
        )
    console.print(backends)
    judges = Table(title="Judges (task keys)", title_justify="left")
    for column in ("key", "kind", "summary"):
        judges.add_column(column)
    for row in data["judges"]:
        kind = (
            "LLM" if row["uses_llm"] else ("scoreboard" if not row["scores_outcome"] else "local")
        )
        judges.add_row(escape(row["key"]), kind, escape(row["summary"] or ""))
    console.print(judges)
    for failure in data["failures"]:
        console.print(
            f"[red]Failed to load[/] {failure['kind'][:-1]} {escape(failure['id'])} "
            f"({escape(str(failure['distribution']))}): {escape(failure['error'])}"
        )


@click.command(name="plugins")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Same as the other commands' --format; json is the same as --json.",
)
@click.option("--no-cli-check", is_flag=True, help="Do not look for the agent CLIs.")
@click.option("-v", "--verbose", is_flag=True, help="Explain why a CLI was not found.")
def command(as_json: bool, output_format: str, no_cli_check: bool, verbose: bool) -> None:
    """List installed plugins, what each provides, and whether each backend's CLI is found.

    A plugin that fails to import is listed with its error; it never hides the others.
    Set CALIPER_LOAD_PLUGINS=name1,name2 to load only some plugins (the built-in judges
    assert and activates always load).

    \b
    Examples:
      caliper plugins
      caliper plugins --no-cli-check --json

    \b
    Exit codes:
      0  the list was shown (broken plugins are listed, not fatal)
    """
    data = collect_plugins(PluginHost(), check_clis=not no_cli_check)
    if as_json or output_format == "json":
        click.echo(json.dumps(data, indent=2))
    else:
        _render(data, verbose)


__all__ = ["BACKENDS", "JUDGES", "collect_plugins", "command"]
