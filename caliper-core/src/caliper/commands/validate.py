"""``caliper validate SPEC...``: check specs without running anything.

Every problem of every file is reported at once, each at ``file:line:column`` with the field
path. Only judge plugins are loaded (to know the task keys); no backend is imported and the
network is never used. Exit status: 0 when all specs are valid, 2 otherwise.

With ``--probe`` each valid spec's tasks are also run with no agent at all (see
:mod:`caliper.replay.probe`): a check that passes anyway measures nothing and exits 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from caliper.errors import CaliperError, SpecError, UsageError
from caliper.host.direct_judges import load_judges
from caliper.host.plugins import JUDGES, PluginHost
from caliper.plugin.skill_listing import LISTING_CHECK_FLOOR, listing_chars
from caliper.spec.load import check_spec
from caliper.spec.problems import Problem

if TYPE_CHECKING:
    from caliper.replay.probe import ProbeCheck
    from caliper.spec.load import SpecCheck

INVALID_EXIT = 2
PROBE_FLAGGED_EXIT = 1


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


INSTALL_LINES = 20
"""Up to this many skills, ``validate`` prints one line per skill of what it installs."""


def _size(count: int) -> str:
    for unit, scale in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


def _files(count: int) -> str:
    return f"{count} file{'s' if count != 1 else ''}"


def _render_installs(check: SpecCheck, verbose: bool) -> None:
    """What each skill installs: one line per skill (or a total for many), files with -v."""
    installs = check.installs
    if not installs:
        return
    if len(installs) > INSTALL_LINES and not verbose:
        files = sum(i.files for i in installs)
        size = sum(i.bytes for i in installs)
        click.echo(
            f"  installs {len(installs)} skills: {_files(files)}, {_size(size)} "
            "(--verbose lists them)"
        )
        return
    for summary in installs:
        click.echo(f"  installs {summary.name}: {_files(summary.files)}, {_size(summary.bytes)}")
        for path in summary.paths:
            click.echo(f"    {path}")


def _render_text(
    results: list[tuple[Path, SpecCheck]], plugin_notes: list[str], verbose: bool = False
) -> None:
    for note in plugin_notes:
        click.echo(click.style("warning: ", fg="yellow") + note)
    invalid = 0
    for path, check in results:
        if check.valid:
            click.echo(click.style("✓ ", fg="green") + f"{path}: valid: {_summary(check)}")
            _render_installs(check, verbose)
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


def _render_json(
    results: list[tuple[Path, SpecCheck]],
    plugin_notes: list[str],
    probes: dict[Path, list[ProbeCheck]] | None = None,
    verbose: bool = False,
) -> None:
    specs: list[dict[str, Any]] = []
    for path, check in results:
        probe_data = {}
        if probes is not None:
            probe_data["probe"] = [c.to_json() for c in probes.get(path, [])]
        specs.append(
            {
                **probe_data,
                "path": str(path),
                "valid": check.valid,
                "tasks": len(check.spec.tasks) if check.spec else None,
                "skills": [s.name for s in check.skills],
                "installs": [
                    {
                        "skill": i.name,
                        "files": i.files,
                        "bytes": i.bytes,
                        **({"paths": list(i.paths)} if verbose else {}),
                    }
                    for i in check.installs
                ],
                "problems": [p.to_json() for p in check.problems],
                "warnings": [w.to_json() for w in check.warnings],
                "notes": list(check.notes),
            }
        )
    payload: dict[str, Any] = {
        "valid": all(check.valid for _, check in results),
        "specs": specs,
        "plugin_warnings": plugin_notes,
    }
    if probes is not None:
        payload["probe_flagged"] = sum(
            1 for found in probes.values() for c in found if c.status.flagged
        )
    import json

    click.echo(json.dumps(payload, indent=2, ensure_ascii=False))


class _Host:
    """The plugin host, made only when a command part needs more than the judges (backends
    for a long skill listing, ``--probe``): the judges alone are loaded without stevedore
    or pluggy where possible (:mod:`caliper.host.direct_judges`)."""

    def __init__(self) -> None:
        self._host: Any = None

    def judges(self) -> tuple[dict[str, Any], list[Any]]:
        """The installed judges by key, and the judge plugins that failed to load."""
        loaded = load_judges()
        if loaded is not None:
            return loaded

        judges = self.host.judges()
        return judges, [f for f in self.host.failures if f.entry.group == JUDGES]

    @property
    def host(self) -> Any:
        """The :class:`caliper.host.plugins.PluginHost`, made on first use."""
        if self._host is None:
            self._host = PluginHost()
        return self._host

    def backends(self) -> dict[str, Any]:
        """Every installed backend by id (through the plugin host)."""
        return self.host.backends()


def _add_listing_warnings(host: _Host, results: list[tuple[Path, SpecCheck]]) -> None:
    """Warn where a neighbourhood is listed to the model only in part by some backend.

    Backends are loaded only for listings over ``LISTING_CHECK_FLOOR`` characters, so
    ordinary specs still validate without importing any backend.
    """
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
                message = backend.skill_listing_warning(pairs, model_known=False)
            except Exception:  # a plugin's bug must not break validate
                continue
            if message:
                check.warnings.append(Problem(path, line, None, "skills", message))


EPILOG = """\b
Examples:
  caliper validate my-skill.eval.yaml
  caliper validate evals/*.eval.yaml
  caliper validate -v my-skill.eval.yaml       # + every file each skill installs
  caliper validate my-skill.eval.yaml --format json | jq .valid
  caliper validate --probe my-skill.eval.yaml        # run setup + asserts, no agent
  caliper validate --probe my-skill.eval.yaml --judge-model claude-code   # + expect:

\b
Exit codes:
  0    every spec is valid (warnings do not count); with --probe, every
       probed check also failed when the agent did nothing, as it should
  1    --probe: a check passes without the agent doing anything (it measures
       nothing), or a task's setup: fails with no agent involved
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
@click.option(
    "--probe",
    is_flag=True,
    help="Also run each task's setup: and checks in a fresh sandbox with NO agent, and flag "
    "every check that passes anyway (it measures nothing; e.g. a tools: check with only "
    "not_called). activates: is exempt. Runs setup:/cleanup: commands and assert: code, "
    "never an agent CLI.",
)
@click.option(
    "--judge-model",
    metavar="TARGET",
    help="With --probe: also probe expect: checks with this LLM judge engine (same grammar "
    "as `caliper run --judge-model`); the judge sees an empty transcript. Costs tokens.",
)
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="List every file each skill installs (by default: each skill's file count and size).",
)
def command(
    specs: tuple[Path, ...],
    output_format: str,
    probe: bool,
    judge_model: str | None,
    verbose: bool,
) -> None:
    """Check SPEC files for errors without running anything.

    Reports every problem in every file at once (file:line:column, the field, what was
    expected), and what each skill installs into an attempt (files left out by .gitignore,
    .caliperignore and caliper's own outputs are not counted). Never uses the network: git
    skill sources are checked only when cached. Nothing is run: no agent, no setup command,
    no assertion.
    """
    host = _Host()
    judges, load_failures = host.judges()
    failures = {f.entry.name: f.error for f in load_failures}
    plugin_notes = [
        f"judge plugin {name!r} failed to load: {why}" for name, why in failures.items()
    ]
    results = [
        (
            path,
            check_spec(path, judges, judge_failures=failures, hashed=False, list_files=verbose),
        )
        for path in specs
    ]
    _add_listing_warnings(host, results)
    if judge_model is not None and not probe:
        raise UsageError("--judge-model is used only with --probe.")
    probes = _run_probes(host.host, judges, results, judge_model) if probe else None
    if output_format == "json":
        _render_json(results, plugin_notes, probes, verbose)
    else:
        _render_text(results, plugin_notes, verbose)
        if probes is not None:
            _render_probes_text(probes)
    invalid = [check for _, check in results if not check.valid]
    if invalid:
        # Raised (not ctx.exit) so the exit status survives `caliper.cli.main`.
        problems = sum(len(check.problems) for check in invalid)
        raise SpecError(
            f"{len(invalid)} of {len(results)} spec{'s' if len(results) != 1 else ''} invalid "
            f"({problems} problem{'s' if problems != 1 else ''}).",
            exit_code=INVALID_EXIT,
        )
    if probes is not None:
        _raise_if_flagged(probes)


def _run_probes(
    host: Any,
    judges: Any,
    results: list[tuple[Path, SpecCheck]],
    judge_model: str | None,
) -> dict[Path, list[ProbeCheck]]:
    """Probe every valid spec with no agent (see :mod:`caliper.replay.probe`)."""
    from caliper.replay.probe import Prober
    from caliper.runner.run.options import DEFAULT_SETUP_TIMEOUT, DEFAULT_TIMEOUT

    engine = None
    if judge_model is not None:
        from caliper.runner.attempt.judge_calls import judge_engine_named

        engine = judge_engine_named(host, judge_model)
    probes: dict[Path, list[ProbeCheck]] = {}
    for path, check in results:
        if check.spec is None:
            continue
        prober = Prober(
            spec=check.spec,
            judges=judges,
            judge_engine=(lambda e=engine: e) if engine is not None else None,
            timeout=DEFAULT_TIMEOUT,
            setup_timeout=DEFAULT_SETUP_TIMEOUT,
            declared_skills=tuple(s.name for s in check.skills),
            display_path=path,
        )
        probes[path] = prober.probe()
    return probes


_PROBE_MARK = {
    "measures_nothing": ("✗ ", "red"),
    "setup_failed": ("✗ ", "red"),
    "no_verdict": ("? ", "yellow"),
    "not_probed": ("· ", "cyan"),
    "can_fail": ("✓ ", "green"),
}


def _render_probes_text(probes: dict[Path, list[ProbeCheck]]) -> None:
    """One line per probed check, ``file:line: task 'NAME': what happened``."""
    for path, found in probes.items():
        flagged = sum(1 for c in found if c.status.flagged)
        tasks = len({c.task for c in found})
        click.echo(
            f"probe {path}: {len(found)} check{'s' if len(found) != 1 else ''} in {tasks} "
            f"task{'s' if tasks != 1 else ''} run with no agent, {flagged} flagged"
        )
        for finding in found:
            mark, colour = _PROBE_MARK[finding.status.value]
            click.echo(
                "  "
                + click.style(mark, fg=colour)
                + f"{finding.where}: task {finding.task!r}: {finding.message}"
            )


def _raise_if_flagged(probes: dict[Path, list[ProbeCheck]]) -> None:
    flagged = [c for found in probes.values() for c in found if c.status.flagged]
    if flagged:
        raise CaliperError(
            f"The probe flagged {len(flagged)} check{'s' if len(flagged) != 1 else ''}: "
            "with no agent at all, a check passed or a setup failed.",
            hint="Make each flagged assert/expect depend on what the agent must do (e.g. "
            "check the file it has to write, not one setup: already made).",
            exit_code=PROBE_FLAGGED_EXIT,
        )
