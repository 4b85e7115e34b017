"""Short labels for what a run's metadata says about its setup (shown by report, list,
history and compare): what it left out, and what of the user's own setup it loaded.

Kept apart from :mod:`caliper.results.compare` so a command that shows one run does not
import the comparison and its tests.
"""

from __future__ import annotations

from caliper.results.models import RunMeta

SETUP_KINDS = ("skills", "rules", "settings", "mcp")
"""The kinds of the user's own setup a run may load, in the order they are shown."""


def ablated_names(meta: RunMeta) -> list[str]:
    """What a run left out (``--ablate``): skills by name (from the flags and the snapshots),
    then ``mcp:`` servers as ``mcp:NAME``."""
    names = list(meta.ablated)
    names += [s.name for s in meta.skill_snapshots if s.ablated and s.name not in names]
    names += [f"mcp:{name}" for name in meta.ablated_mcp]
    return names


def user_setup_label(meta: RunMeta) -> str:
    """What of the user's own setup a run loaded, in a few words (``none`` when isolated)."""
    if not meta.user_customizations:
        return "none (isolated)"
    parts = [
        f"{kind} {', '.join(meta.user_setup[kind])}"
        for kind in SETUP_KINDS
        if meta.user_setup.get(kind)
    ]
    return "; ".join(parts) or "requested, but nothing was found to load"


DERIVED_KINDS = ("regrade", "retry", "merge", "review")
"""The commands that make a run from saved runs (``meta.derived_by``)."""

_WHAT_RAN = {
    "regrade": "no agent ran; the parent's attempts were graded again",
    "retry": "only the parent's failed attempts were run again; the rest are copied from it",
    "merge": "no agent ran; the shard runs' attempts were joined",
    "review": "no agent ran; a person set the verdicts of some of the parent's attempts",
}


def derived_kind(meta: RunMeta) -> str | None:
    """``regrade``, ``retry``, ``review`` or ``merge`` when the run was made from saved runs,
    else ``None`` (a merged run saved before ``derived_by`` existed is known by its
    ``merged_from``)."""
    if meta.derived_by:
        return meta.derived_by
    if meta.merged_from:
        return "merge"
    return None


def parent_label(meta: RunMeta) -> str | None:
    """The run(s) this one was made from: ``SPEC/RUN-ID``, or the shards of a merge."""
    if meta.parent_run:
        return meta.parent_run
    if meta.merged_from:
        runs = [str(item.get("run")) for item in meta.merged_from]
        return f"{len(runs)} shard runs ({', '.join(runs)})"
    return None


def derived_short(meta: RunMeta) -> str | None:
    """A few words for a table: ``regrade of RUN``, ``merged (3 shards)``, ``resumed``."""
    kind = derived_kind(meta)
    parts = []
    if kind == "merge":
        parts.append(f"merged ({len(meta.merged_from)} shards)")
    elif kind:
        parent = meta.parent_run.rpartition("/")[2] if meta.parent_run else "?"
        parts.append(f"{kind} of {parent}")
    if meta.resumed_at:
        times = len(meta.resumed_at)
        parts.append("resumed" if times == 1 else f"resumed {times}×")
    return ", ".join(parts) or None


def derived_sentence(meta: RunMeta) -> str | None:
    """One sentence saying how the run was made when it is not an ordinary run, e.g. ``A
    regrade of demo/RUN — no agent ran; …``; resumes are added (``None``: an ordinary run)."""
    kind = derived_kind(meta)
    parts = []
    if kind:
        what = _WHAT_RAN.get(kind, "made from saved runs")
        parts.append(f"A {kind} of {parent_label(meta) or 'an unnamed run'} — {what}")
    if meta.resumed_at:
        times = len(meta.resumed_at)
        parts.append(
            f"Resumed {'once' if times == 1 else f'{times} times'} after a stop "
            f"(last at {meta.resumed_at[-1]})"
        )
    return ". ".join(parts) + "." if parts else None
