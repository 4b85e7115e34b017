"""``caliper compare --baseline ID``: a saved baseline pair judged again.

The pair's arms are found by ``meta.baseline.id`` (``SPEC/ID`` looks in that spec's runs
only); per engine the latest saved run of each arm that is not a shard is judged (after
``caliper merge``, the merged arms). The verdict, formats and exits are those of the end of
``caliper run --baseline``: 1 when the skill hurts (what ``--fail-on`` names), 3 when
``--require-improvement`` or ``--min-lift`` fails, 2 when the pair is not comparable.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from caliper.commands.finishing import exit_for
from caliper.commands.run_baseline import judged_pair, pair_problems, show_pairs, write_junit
from caliper.commands.run_matrix import worst
from caliper.errors import CaliperError, UsageError
from caliper.results.baseline_store import latest_pair, saved_arms
from caliper.results.store import caliper_root, load_run

if TYPE_CHECKING:
    from caliper.commands.run_baseline import BaselineRequest, ShownPair


class PairNotComparable(CaliperError):
    """An arm of the pair is partial and ``--allow-partial`` was not given (exit 2)."""

    exit_code = 2


def compare_baseline(
    reference: str, request: BaselineRequest, *, allow_partial: bool = False
) -> None:
    """Show the pair(s) of baseline ``reference`` and leave with the exit they call for."""
    pairs = load_pairs(reference, request)
    show_pairs(pairs, request, reference.rpartition("/")[2], None)
    if request.junit is not None:
        write_junit(request, pairs)
    incomplete = [p for p in pairs if not p.verdict.comparison.comparable]
    if incomplete and not allow_partial:
        sides = "; ".join(
            f"{p.verdict.engine or 'the pair'}: "
            + ", ".join(
                f"the {label} arm {side.phrase}"
                for label, side in (
                    ("control", p.verdict.comparison.a_side),
                    ("full", p.verdict.comparison.b_side),
                )
                if not side.complete
            )
            for p in incomplete
        )
        raise PairNotComparable(
            f"Not comparable: {sides}.",
            hint="Resume it (`caliper run SPEC --resume RUN` resumes both arms), or pass "
            "--allow-partial to judge what finished.",
        )
    exit_for(worst(pair_problems(pairs, request)))


def load_pairs(reference: str, request: BaselineRequest) -> list[ShownPair]:
    """Every engine's pair of baseline ``reference``, judged, in the order first saved."""
    spec_name, _, ident = reference.rpartition("/")
    root = caliper_root(Path.cwd(), None)
    arms = saved_arms(root, spec_name or None, ident)
    if not arms:
        raise UsageError(
            f"No saved run belongs to baseline {reference!r} (looked under {root / 'results'}).",
            hint="A baseline id is printed at the end of `caliper run SPEC --baseline`; "
            "`caliper list SPEC` marks each arm with it.",
        )
    engines = list(dict.fromkeys(arm.engine for arm in arms))
    pairs = []
    for engine in engines:
        pair = latest_pair(arms, engine)
        if set(pair) != {"control", "full"}:
            missing = sorted({"control", "full"} - set(pair))
            shards = any(a.shard and a.engine == engine for a in arms)
            raise UsageError(
                f"Baseline {reference}: the {' and '.join(missing)} arm"
                + (f" of --model {engine}" if engine else "")
                + (" is saved only as shard runs." if shards else " is not saved here."),
                hint="Merge each arm's shards first (`caliper merge` the shard runs: both arms "
                "at once)."
                if shards
                else "Run the baseline again (`caliper run SPEC --baseline`).",
            )
        control, full = pair["control"].entry.path, pair["full"].entry.path
        pairs.append(
            judged_pair(
                load_run(control, transcripts=False),
                load_run(full, transcripts=False),
                request,
                engine=engine,
                control_path=control,
                full_path=full,
            )
        )
    return pairs
