"""A baseline in one run: ``caliper run SPEC --baseline [NAME …]``.

:func:`run_baseline` runs the spec twice in one executor session: the **full** arm (the
neighbourhood as declared) and the **control** arm (without the skills and ``mcp:`` servers
the baseline leaves out: the skill under test, the first declared skill, by default). Both
arms are the many-key case of the one orchestration,
:func:`caliper.runner.run.compose.run_engines`, one key per arm and engine: every arm is
prepared before any attempt starts, each gets its own journal and saved run, tied to the
other by ``meta.baseline`` (the same ``id``, its ``arm``, what it ``left_out``).

The attempts go out in a seeded random order (:func:`paired_order`): attempt *n* of a task
on one arm is next to attempt *n* of the same task on the other, in an order a coin decides,
so whatever changes over time (a provider's load, a rate limit) falls on both arms alike.
With ``--k auto`` the pair's tasks stop once the difference is decided
(:mod:`caliper.runner.paired_adaptive`).
"""

from __future__ import annotations

import hashlib
import random
import secrets
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from caliper.errors import UsageError
from caliper.host.plugins import PluginHost
from caliper.results.store import new_run_id
from caliper.runner.matrix import engine_keys
from caliper.runner.paired_adaptive import PAIRED_METHOD, paired_adaptive
from caliper.runner.run.compose import Tie, run_engines
from caliper.runner.run.prepare import check_ablation
from caliper.spec.load import load_spec_for_run
from caliper.spec.model import spec_name_for
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from rich.console import Console

    from caliper.plugin.executor import AttemptJob
    from caliper.plugin.skills import ResolvedSkill
    from caliper.runner.run.ending import RunEnding
    from caliper.runner.run.options import RunOptions
    from caliper.runner.run.plan import Continuation
    from caliper.spec.model import Spec

FULL = "full"
CONTROL = "control"
ARMS = (CONTROL, FULL)
ORDER = "paired, seeded random order within each pair"
"""``meta.baseline.order``: how the two arms' attempts share the one queue."""


@attrs_classes.frozen
class ArmKey:
    """One saved run of a baseline: an engine (``--model`` as given, ``""`` for the
    default) and an arm (``full`` or ``control``)."""

    engine: str
    arm: str

    @property
    def key(self) -> str:
        """The engine key the orchestration knows this arm by (shown in the live display)."""
        return f"{self.engine} {self.arm}" if self.engine else self.arm


@attrs_classes.frozen
class BaselineEnding:
    """A finished (or stopped) baseline: its id, what the control arm left out, and per
    engine the :class:`RunEnding` of each arm."""

    baseline_id: str
    left_out: tuple[str, ...]
    engines: list[str]
    control: list[RunEnding]
    full: list[RunEnding]
    seed: int

    @property
    def endings(self) -> list[RunEnding]:
        """Every arm's ending: each engine's control, then its full arm."""
        return [e for pair in zip(self.control, self.full, strict=True) for e in pair]


def new_baseline_id() -> str:
    """A baseline id: the UTC start time, as run ids are, plus 6 random hex digits."""
    return f"{new_run_id()}-{secrets.token_hex(3)}"


def left_out_names(spec: Spec, skill_names: Sequence[str], names: Sequence[str]) -> tuple[str, ...]:
    """What the control arm leaves out: ``names`` as given (each checked later like an
    ``--ablate`` name), else the skill under test (the first declared skill, known by the
    name in ``skill_names``), else the first declared ``mcp:`` server. A spec with neither
    has nothing to leave out (exit 2)."""
    chosen = tuple(dict.fromkeys(name.strip() for name in names if name.strip()))
    if chosen:
        return chosen
    servers = [server.name for server in spec.mcp]
    if skill_names:
        name = skill_names[0]
        return (f"skill:{name}" if name in servers else name,)
    if servers:
        return (f"mcp:{servers[0]}",)
    raise UsageError(
        f"--baseline: the spec {spec.name} declares no skill and no mcp: server, so the control "
        "arm would be the same as the full one.",
        hint="Declare the skill under test under skills:, or run without --baseline.",
    )


def declared(options: RunOptions, host: PluginHost) -> tuple[Spec, list[ResolvedSkill]]:
    """The spec and its declared skills, in declaration order (resolved as a run resolves
    them; an invalid spec raises its usual error)."""
    return load_spec_for_run(options.spec_path, host.judges())


def arm_options(options: RunOptions, left_out: Sequence[str]) -> tuple[RunOptions, RunOptions]:
    """``(control, full)``: the full arm runs ``options`` as they are; the control arm also
    leaves out ``left_out``. Naming in ``--baseline`` what ``--ablate`` already leaves out of
    both arms is refused (exit 2): the arms would not differ in it."""
    both = {_bare(name) for name in options.ablate}
    twice = [name for name in left_out if _bare(name) in both]
    if twice:
        raise UsageError(
            f"--baseline {twice[0]}: --ablate already leaves it out of both arms.",
            hint="Name it in --baseline (left out of the control arm only) or in --ablate "
            "(left out of both), not in both.",
        )
    control = attrs.evolve(options, ablate=(*options.ablate, *left_out))
    return control, options


def _bare(name: str) -> str:
    """``skill:NAME``/``mcp:NAME``/``NAME`` as the name alone."""
    for prefix in ("skill:", "mcp:"):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def paired_order(seed: int) -> Any:
    """The order that puts both arms' jobs in one queue: pairs (same engine, task and
    attempt number on the two arms) in plan order, one engine's pair after another's, and
    within each pair a coin (seeded by ``seed``) says which arm goes first."""

    def order(jobs_by_key: Mapping[str, list[AttemptJob]]) -> list[AttemptJob]:
        coin = random.Random(seed)
        pairs: dict[tuple[str, str, int], list[AttemptJob]] = {}
        for key, jobs in jobs_by_key.items():
            engine = _engine_of(key)
            for job in jobs:
                pairs.setdefault((engine, job.task_name, job.number), []).append(job)
        by_engine: dict[str, list[list[AttemptJob]]] = {}
        for (engine, _task, _number), pair in pairs.items():
            coin.shuffle(pair)
            by_engine.setdefault(engine, []).append(pair)
        lists = list(by_engine.values())
        longest = max((len(p) for p in lists), default=0)
        return [job for i in range(longest) for p in lists if i < len(p) for job in p[i]]

    return order


def _engine_of(key: str) -> str:
    """The engine part of an arm's key (see :attr:`ArmKey.key`)."""
    for arm in ARMS:
        if key == arm:
            return ""
        if key.endswith(f" {arm}"):
            return key[: -len(arm) - 1]
    return key


def shard_pair_identity(
    spec_sha256: str, options: RunOptions, left_out: Sequence[str], engines: Sequence[str]
) -> tuple[str, int]:
    """The id and seed every ``--shard I/N`` job of one baseline computes alike: from the
    spec's bytes, k, the shard count, what the control arm leaves out, the engines and
    ``--ablate`` (so ``caliper merge`` of all jobs' shards gives one pair)."""
    assert options.shard is not None
    text = "|".join(
        [
            spec_sha256,
            str(options.k),
            str(options.shard.count),
            ",".join(sorted(left_out)),
            ",".join(engines),
            ",".join(sorted(options.ablate)),
        ]
    )
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"shards-{digest[:12]}", int(digest[12:20], 16) % 2**31


def _notes(
    arm: ArmKey,
    baseline_id: str,
    left_out: Sequence[str],
    seed: int,
    lift_bar: float,
    options: RunOptions,
) -> dict[str, Any]:
    """The metadata an arm's saved run gets: ``meta.baseline`` (and, under ``--k auto``, the
    paired stopping rule in ``meta.adaptive``)."""
    notes: dict[str, Any] = {
        "baseline": {
            "id": baseline_id,
            "arm": arm.arm,
            "left_out": list(left_out),
            "engine": arm.engine,
            "seed": seed,
            "order": ORDER,
        }
    }
    if options.adaptive is not None:
        notes["adaptive"] = {
            **options.adaptive.to_data(),
            "method": PAIRED_METHOD,
            "lift_bar": lift_bar,
        }
    return notes


def run_baseline(
    options: Sequence[RunOptions],
    names: Sequence[str],
    *,
    host: PluginHost | None = None,
    progress_console: Console | None = None,
    continuations: Mapping[ArmKey, Continuation] | None = None,
    baseline_id: str | None = None,
    seed: int | None = None,
    lift_bar: float = 0.0,
) -> BaselineEnding:
    """Run the full and the control arm of the spec on every engine of ``options`` (one per
    ``--model``, differing only in ``model``) in one pool, and save one run per arm and engine.

    ``names`` are what ``--baseline`` names (empty: the skill under test);
    ``continuations`` resume a saved pair (same ``baseline_id`` and ``seed``); ``lift_bar``
    is what ``--k auto`` decides the lift against (``--min-lift``, else 0). Raises
    :class:`~caliper.errors.CaliperError` subclasses for problems found before the first
    attempt.
    """
    host = host or PluginHost()
    if len(options) > 1:
        engines = engine_keys([o.model or "" for o in options])
    else:
        engines = [options[0].model or ""]
    spec, skills = declared(options[0], host)
    left_out = left_out_names(spec, [skill.name for skill in skills], names)
    check_ablation(left_out, skills, [server.name for server in spec.mcp], flag="--baseline")
    if options[0].shard is not None and baseline_id is None:
        # every shard job of one pipeline must name the same pair, with no talk between them
        baseline_id, seed = shard_pair_identity(spec.sha256, options[0], left_out, engines)
    baseline_id = baseline_id or new_baseline_id()
    seed = seed if seed is not None else secrets.randbelow(2**31)
    arms: dict[ArmKey, RunOptions] = {}
    for engine, opts in zip(engines, options, strict=True):
        control, full = arm_options(opts, left_out)
        arms[ArmKey(engine, CONTROL)] = control
        arms[ArmKey(engine, FULL)] = full
    notes = {
        arm.key: _notes(arm, baseline_id, left_out, seed, lift_bar, options[0]) for arm in arms
    }
    title = f"caliper run {spec_name_for(options[0].spec_path)} --baseline: without " + (
        ", ".join(left_out)
    )
    adaptive = options[0].adaptive
    tie = Tie(
        notes=notes,
        title=title + (f" on {len(engines)} engines" if len(engines) > 1 else ""),
        order=paired_order(seed),
        adaptive=paired_adaptive(
            lift_bar,
            {e: (ArmKey(e, CONTROL).key, ArmKey(e, FULL).key) for e in engines},
        )
        if adaptive is not None
        else None,
    )
    endings = run_engines(
        {arm.key: opts for arm, opts in arms.items()},
        options[0].run_level(),
        host=host,
        progress_console=progress_console,
        continuation={arm.key: c for arm, c in (continuations or {}).items()} or None,
        tie=tie,
    )
    return BaselineEnding(
        baseline_id=baseline_id,
        left_out=left_out,
        engines=engines,
        control=[endings[ArmKey(e, CONTROL).key] for e in engines],
        full=[endings[ArmKey(e, FULL).key] for e in engines],
        seed=seed,
    )
