"""``caliper tune SKILL_DIR --probes FILE``: improve a skill's description against real
activation, with a held-out test set and statistically supported choices."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING

import click

from caliper.commands.attempt_options import model_option, timeout_option, workers_option
from caliper.commands.confidence import confidence_option
from caliper.errors import CaliperError, SetupError, UsageError
from caliper.host.engine import resolve_engine
from caliper.host.plugins import PluginHost
from caliper.plugin.sandbox import resolve_extra_path
from caliper.results.store import ROOT_DIR, find_caliper_dir, new_run_id
from caliper.spec.frontmatter import check_skill_file
from caliper.spec.problems import Problem, SpecInvalid
from caliper.spec.skills import resolve_skills
from caliper.system import stop_policy
from caliper.system.output_file import OutputWriteError, replace_problem, write_output
from caliper.tune.description import replace_description
from caliper.tune.loop import Tuner, TuneSettings, check_budget, check_reachable, write_json
from caliper.tune.measure import Neighbourhood, RunSettings
from caliper.tune.probes import ProbesInvalid, load_probes
from caliper.tune.split import split_probes

if TYPE_CHECKING:
    from caliper.results.stats import Interval
    from caliper.spec.model import Spec
    from caliper.tune.loop import TuneOutcome
    from caliper.tune.measure import Measurement
    from caliper.tune.probes import ProbeSet

EPILOG = """\b
Examples:
  caliper tune skills/shout --probes shout.probes.yaml
  caliper tune skills/shout --probes shout.eval.yaml --k 5 --iterations 3
  caliper tune skills/shout --probes evals/trigger-eval.json --model codex \\
      --proposer-model claude-code --max-attempts 300 --seed 7 --write

\b
The probes are split into train (to choose) and test (to report), seeded and
stratified; each description is measured by ordinary runs saved under
.caliper/results/tune-SKILL-{train,test}/, and the session (split, every
candidate, summary.json) under .caliper/tune/SKILL/ID/. Without --write the
description change is printed as a diff; with it, SKILL.md is updated in place
(only the description line changes).

\b
Exit codes:
  0    tuning finished (whether or not a better description was found)
  1    nothing could be measured: every attempt of the current description was
       unusable, or a run could not be saved
  2    bad usage: a malformed probe file, unknown --model/--proposer-model, a
       --max-attempts too small for even one measurement, a --k or probe count
       at which no candidate could ever be accepted, --write on a read-only
       SKILL.md
  3    setup error: an agent CLI is missing or cannot log in
  74   --write found the disk full (SKILL.md is left as it was)
  130  interrupted with Ctrl-C (143 SIGTERM, 129 SIGHUP): the runs so far and
       summary.json are saved, SKILL.md is not written
"""

DEFAULT_TUNE_K = 3
DEFAULT_ITERATIONS = 5
DEFAULT_CANDIDATES = 3


@click.command(name="tune", epilog=EPILOG)
@click.argument("skill_dir", type=click.Path(path_type=Path))
@click.option(
    "--probes",
    "probes_path",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help="Probe set: a probe file (YAML/JSON), skill-creator trigger-eval JSON, or a spec "
    "(*.eval.yaml) whose activates: tasks are the probes.",
)
@model_option("Engine that runs the probes (as caliper run).")
@click.option(
    "--proposer-model",
    metavar="TARGET",
    help="Engine that proposes descriptions (default: the --model engine).",
)
@click.option(
    "--k",
    "k",
    type=click.IntRange(min=1),
    default=DEFAULT_TUNE_K,
    show_default=True,
    help="Attempts per probe for every measurement.",
)
@click.option(
    "--iterations",
    type=click.IntRange(min=1),
    default=DEFAULT_ITERATIONS,
    show_default=True,
    help="Most proposal rounds.",
)
@click.option(
    "--candidates",
    type=click.IntRange(min=1),
    default=DEFAULT_CANDIDATES,
    show_default=True,
    help="Descriptions asked for per round.",
)
@click.option(
    "--max-attempts",
    type=click.IntRange(min=1),
    metavar="N",
    help="Stop cleanly, keeping the best so far, before going over N attempts in all "
    "(the final test measurements are reserved).",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the train/test split."
)
@click.option(
    "--test-fraction",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.4,
    show_default=True,
    help="Share of each stratum held out for test.",
)
@workers_option("Attempts running at the same time.")
@timeout_option("Time budget of one attempt.")
@click.option(
    "--write",
    is_flag=True,
    help="Update the description in SKILL.md in place (else print the diff).",
)
@confidence_option
def command(
    skill_dir: Path,
    probes_path: Path,
    model: str | None,
    proposer_model: str | None,
    k: int,
    iterations: int,
    candidates: int,
    max_attempts: int | None,
    seed: int,
    test_fraction: float,
    workers: int,
    timeout: float,
    write: bool,
    confidence: float,
) -> None:
    """Tune SKILL_DIR's description so the agent loads it exactly when it should.

    Measures the current description on the train probes (k attempts each, real agent,
    the neighbourhood installed), asks a proposer model for revisions given the failures,
    keeps a revision only when its gain is statistically supported, and finally reports
    recall, precision and accuracy on the held-out test probes, before → after.
    """
    skill_file, name, description = _read_skill(skill_dir)
    if write:
        _check_writable(skill_file)
    probe_set = load_probes(probes_path)
    host = PluginHost()
    neighbourhood = _neighbourhood(skill_file.parent, name, probe_set)
    split = split_probes(probe_set.probes, name, seed=seed, test_fraction=test_fraction)
    if not split.train:
        raise UsageError(f"{probes_path}: no probe is left for train.")
    check_budget(split, k, max_attempts)
    check_reachable(split, k, 1.0 - confidence)
    proposer = _proposer(host, model, proposer_model)
    folder = _session_folder(name)
    write_json(folder / "split.json", split.to_json())
    settings = TuneSettings(
        run=RunSettings(model=model, k=k, workers=workers, timeout=timeout, confidence=confidence),
        proposer_model=proposer_model,
        iterations=iterations,
        candidates=candidates,
        max_attempts=max_attempts,
        seed=seed,
    )
    click.echo(
        f"caliper tune {name}: {len(probe_set.probes)} probes from {shown(probes_path)} "
        f"({len(split.train)} train, {len(split.test)} test; seed {seed}), k={k}, "
        f"proposer {proposer.label}"
    )
    tuner = Tuner(
        neighbourhood,
        description,
        probe_set,
        split,
        settings,
        folder,
        host=host,
        proposer=proposer,
        emit=click.echo,
    )
    outcome = tuner.run()
    stop_policy.check()  # a stop during the last measurement: nothing is written after it
    _report(outcome, confidence)
    stop_policy.check()
    _apply(outcome, skill_file, write, folder)
    click.echo(f"Session saved in {shown(folder)} (summary.json, split.json, every candidate).")


def _proposer(host, model: str | None, proposer_model: str | None):
    """The proposer's engine (``--proposer-model``, else ``--model``'s), once both engines
    resolve and their agent CLIs are installed (else a setup error, exit 3)."""
    engine = resolve_engine(host, model)
    proposer = resolve_engine(host, proposer_model or model, flag="--proposer-model")
    for backend in dict.fromkeys([engine.backend, proposer.backend]):
        if backend.find_cli() is None:
            raise SetupError(backend.missing_cli_message())
    return proposer


def shown(path: Path | str) -> str:
    """``path`` relative to the current folder when it lies under it (shorter to read)."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _read_skill(skill_dir: Path) -> tuple[Path, str, str]:
    skill_file = skill_dir if skill_dir.name == "SKILL.md" else skill_dir / "SKILL.md"
    if not skill_file.is_file():
        raise UsageError(
            f"{skill_dir}: no SKILL.md there; SKILL_DIR is a skill folder (or its SKILL.md)."
        )
    checked = check_skill_file(skill_file)
    if checked.frontmatter is None:
        raise SpecInvalid(checked.problems, hint="Fix the SKILL.md frontmatter first.")
    return skill_file, checked.frontmatter.name, checked.frontmatter.description


def _neighbourhood(skill_dir: Path, name: str, probe_set: ProbeSet) -> Neighbourhood:
    """The tuned skill and its competitors: the spec's skills, or the probe file's."""
    problems: list[Problem] = []
    neighbours: dict[str, Path] = {}
    if probe_set.spec is not None:
        for skill in resolve_skills(probe_set.spec):
            if skill.name != name:
                neighbours[skill.name] = skill.source_dir
    for path in probe_set.skill_paths:
        skill_file = path if path.name == "SKILL.md" else path / "SKILL.md"
        checked = check_skill_file(skill_file)
        if checked.frontmatter is None:
            problems.extend(checked.problems)
        elif checked.frontmatter.name != name:
            neighbours[checked.frontmatter.name] = skill_file.parent.resolve()
    if probe_set.skill is not None and probe_set.skill != name:
        problems.append(
            Problem(
                probe_set.source,
                1,
                1,
                "skill",
                f"the probes are for {probe_set.skill!r}, but {skill_dir} is {name!r}",
            )
        )
    known = {name, *neighbours}
    for probe in probe_set.probes:
        for skill in probe.activates or ():
            if skill not in known:
                problems.append(
                    Problem(
                        probe_set.source,
                        probe.line,
                        None,
                        f"{probe.name}.activates",
                        f"{skill!r} is not the tuned skill or a declared neighbour "
                        f"(known: {', '.join(sorted(known))})",
                    )
                )
    if problems:
        raise ProbesInvalid(problems)
    sandbox, mcp = _spec_sections(probe_set.spec) if probe_set.spec is not None else (None, None)
    return Neighbourhood(
        skill_dir=skill_dir.resolve(),
        name=name,
        neighbours=tuple(neighbours.values()),
        sandbox=sandbox,
        mcp=mcp,
    )


def _spec_sections(spec: Spec) -> tuple[dict | None, dict | None]:
    """The spec's ``sandbox:`` (paths made absolute) and ``mcp:`` (``${VAR}`` kept as
    written, so no secret is copied) as plain data for the measurement specs."""
    sandbox: dict = {}
    if spec.sandbox.extra_path:
        sandbox["extra_path"] = resolve_extra_path(spec.sandbox.extra_path, spec.directory)
    if spec.sandbox.forbidden_files:
        sandbox["forbidden_files"] = list(spec.sandbox.forbidden_files)
    mcp: dict = {}
    for server in spec.mcp:
        if server.transport == "stdio":
            entry: dict = {"command": server.command}
            if server.args:
                entry["args"] = list(server.args)
            if server.env:
                entry["env"] = dict(server.env)
        else:
            entry = {"type": server.transport, "url": server.url}
            if server.headers:
                entry["headers"] = dict(server.headers)
        mcp[server.name] = entry
    return sandbox or None, mcp or None


def _session_folder(name: str) -> Path:
    root = find_caliper_dir(Path.cwd()) or Path.cwd() / ROOT_DIR
    base = root / "tune" / name
    base.mkdir(parents=True, exist_ok=True)
    session_id = new_run_id()
    folder, n = base / session_id, 1
    while folder.exists():
        n += 1
        folder = base / f"{session_id}-{n}"
    folder.mkdir()
    return folder


def _fmt(value: float | None, interval: Interval | None) -> str:
    if value is None:
        return "–"
    text = f"{value * 100:.0f}%"
    if interval is not None:
        text += f" [{interval.low * 100:.0f}–{interval.high * 100:.0f}%]"
    return text


def _report(outcome: TuneOutcome, confidence: float) -> None:
    before, after = outcome.test_before, outcome.test_after
    label = "winner " + outcome.winner.id if outcome.winner else "unchanged"
    if before is None or after is None:
        click.echo("No test probes: nothing to report beyond train.")
    else:
        click.echo(
            f"Test set ({len(outcome.split.test)} probes, never used to choose; "
            f"{confidence * 100:g}% intervals), current → {label}:"
        )
        for attr in ("recall", "precision", "accuracy"):
            was = _fmt(getattr(before.rates, attr), getattr(before.rates, attr + "_interval"))
            now = _fmt(getattr(after.rates, attr), getattr(after.rates, attr + "_interval"))
            click.echo(f"  {attr:<10}{was:>18}  →  {now}")
        _runs(before, after)
    b = outcome.budget
    click.echo(
        f"Budget: {b.attempts} attempts, {b.tokens:,} agent tokens, {b.proposer_calls} proposer "
        f"call(s) ({b.proposer_tokens:,} tokens)."
    )


def _runs(before: Measurement, after: Measurement) -> None:
    if before.run_path and after.run_path and before.run_path != after.run_path:
        click.echo(f"  runs: caliper compare {shown(before.run_path)} {shown(after.run_path)}")


def _check_writable(skill_file: Path) -> None:
    """Refuse ``--write`` before any attempt when ``skill_file`` cannot be replaced (it is
    read-only, or its folder takes no new file)."""
    problem = replace_problem(skill_file)
    if problem is not None:
        raise UsageError(
            f"--write cannot update {skill_file}: {problem}.",
            hint="Make it writable (chmod u+w, or fix the folder's permissions), or leave out "
            "--write to get the change as a diff.",
        )


def _apply(outcome: TuneOutcome, skill_file: Path, write: bool, session: Path) -> None:
    if outcome.winner is None:
        click.echo("The description is unchanged: no candidate's gain was statistically supported.")
        return
    old = skill_file.read_bytes().decode("utf-8")
    new = replace_description(old, outcome.winner.description)
    if write:
        try:
            write_output(skill_file, new, make_parents=False)
        except OutputWriteError as exc:
            why = "no space left on the device" if exc.full else exc.reason.rstrip(".")
            raise CaliperError(
                f"Could not write the new description to {skill_file} ({why}); the original "
                f"SKILL.md at {skill_file} is intact.",
                hint=f"The winning description is in {shown(session / 'summary.json')}.",
                exit_code=exc.exit_code,
            ) from None
        click.echo(f"Updated the description in {shown(skill_file)}.")
        return
    diff = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"{shown(skill_file)} (current)",
        tofile=f"{shown(skill_file)} ({outcome.winner.id})",
    )
    click.echo("".join(diff).rstrip("\n"))
    click.echo("(pass --write to apply it)")
