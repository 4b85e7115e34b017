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
