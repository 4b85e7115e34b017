"""``caliper validate SPEC...``: check specs without running anything.

Every problem of every file is reported at once, each at ``file:line:column`` with the field
path. Only judge plugins are loaded (to know the task keys); no backend is imported and the
network is never used. Exit status: 0 when all specs are valid, 2 otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from caliper.spec.load import SpecCheck

INVALID_EXIT = 2


def _summary(check: SpecCheck) -> str:
    spec = check.spec
    assert spec is not None
    parts = [f"{len(spec.tasks)} task{'s' if len(spec.tasks) != 1 else ''}"]
    names = [s.name for s in check.skills]
    unchecked = len(spec.skills) - len(names)
    skill_text = f"{len(spec.skills)} skill{'s' if len(spec.skills) != 1 else ''}"
    if names:
        skill_text += f" ({', '.join(names)}{', …' if unchecked else ''})"
    parts.append(skill_text)
    if spec.mcp:
        parts.append(f"{len(spec.mcp)} MCP server{'s' if len(spec.mcp) != 1 else ''}")
    return ", ".join(parts)


def _render_text(results: list[tuple[Path, SpecCheck]], plugin_notes: list[str]) -> None:
    for note in plugin_notes:
        click.echo(click.style("warning: ", fg="yellow") + note)
    invalid = 0
    for path, check in results:
        if check.valid:
            click.echo(click.style("✓ ", fg="green") + f"{path}: valid: {_summary(check)}")
        else:
            invalid += 1
            count = len(check.problems)
            click.echo(
                click.style("✗ ", fg="red") + f"{path}: {count} problem{'s' if count != 1 else ''}"
            )
            for problem in check.problems:
                click.echo(f"  {problem.render()}")
        for warning in check.warnings:
            click.echo("  " + click.style("warning: ", fg="yellow") + warning.render())
        for note in check.notes:
            click.echo("  " + click.style("note: ", fg="cyan") + note)
    if len(results) > 1 and not invalid:
        click.echo(f"All {len(results)} specs are valid.")


def _render_json(results: list[tuple[Path, SpecCheck]], plugin_notes: list[str]) -> None:
    specs: list[dict[str, Any]] = []
    for path, check in results:
        specs.append(
            {
                "path": str(path),
                "valid": check.valid,
                "tasks": len(check.spec.tasks) if check.spec else None,
                "skills": [s.name for s in check.skills],
                "problems": [p.to_json() for p in check.problems],
                "warnings": [w.to_json() for w in check.warnings],
                "notes": list(check.notes),
            }
        )
    payload = {
        "valid": all(check.valid for _, check in results),
        "specs": specs,
        "plugin_warnings": plugin_notes,
    }
    click.echo(json.dumps(payload, indent=2, ensure_ascii=False))


def _add_listing_warnings(host: Any, results: list[tuple[Path, SpecCheck]]) -> None:
    """Warn where a neighbourhood is listed to the model only in part by some backend.

    Backends are loaded only for listings over ``LISTING_CHECK_FLOOR`` characters, so
    ordinary specs still validate without importing any backend.
    """
    from caliper.backend import LISTING_CHECK_FLOOR, listing_chars
    from caliper.spec.problems import Problem

    backends = None
    for path, check in results:
        pairs = [(s.name, s.description) for s in check.skills]
        if check.spec is None or listing_chars(pairs) <= LISTING_CHECK_FLOOR:
            continue
        if backends is None:
            backends = host.backends()
        line = check.spec.skills[0].line if check.spec.skills else None
        for backend in backends.values():
            try:
                message = backend.skill_listing_warning(pairs)
            except Exception:  # a plugin's bug must not break validate
                continue
            if message:
                check.warnings.append(Problem(path, line, None, "skills", message))


EPILOG = """\b
Examples:
  caliper validate my-skill.eval.yaml
  caliper validate evals/*.eval.yaml
  caliper validate my-skill.eval.yaml --format json | jq .valid

\b
Exit codes:
  0    every spec is valid (warnings do not count)
  2    at least one spec has a problem, or bad usage
  130  interrupted with Ctrl-C
"""


@click.command("validate", epilog=EPILOG)
@click.argument("specs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text for people, json for scripts.",
)
def command(specs: tuple[Path, ...], output_format: str) -> None:
    """Check SPEC files for errors without running anything.

    Reports every problem in every file at once (file:line:column, the field, what was
    expected). Never uses the network: git skill sources are checked only when cached.
    Nothing is run: no agent, no setup command, no assertion.
    """
    from caliper.errors import SpecError
    from caliper.plugins import JUDGES, PluginHost
    from caliper.spec.load import check_spec

    host = PluginHost()
    judges = host.judges()
    failures = {f.entry.name: f.error for f in host.failures if f.entry.group == JUDGES}
    plugin_notes = [
        f"judge plugin {name!r} failed to load: {why}" for name, why in failures.items()
    ]
    results = [(path, check_spec(path, judges, judge_failures=failures)) for path in specs]
    _add_listing_warnings(host, results)
    if output_format == "json":
        _render_json(results, plugin_notes)
    else:
        _render_text(results, plugin_notes)
    invalid = [check for _, check in results if not check.valid]
    if invalid:
        # Raised (not ctx.exit) so the exit status survives `caliper.cli.main`.
        problems = sum(len(check.problems) for check in invalid)
        raise SpecError(
            f"{len(invalid)} of {len(results)} spec{'s' if len(results) != 1 else ''} invalid "
            f"({problems} problem{'s' if problems != 1 else ''}).",
            exit_code=INVALID_EXIT,
        )
