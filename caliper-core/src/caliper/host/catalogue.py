"""The product catalogue: Caliper's first-party plugins, by plugin id, and how to install one.

:data:`KNOWN_DISTRIBUTIONS` is what ``caliper`` knows how to suggest when a backend or judge is
missing; the install commands themselves are written by :mod:`caliper.host.install_hints`.
"""

from __future__ import annotations

# First-party plugins caliper knows how to install when they are missing.
KNOWN_DISTRIBUTIONS = {
    "claude-code": ("caliper-backend-claude", None),
    "codex": ("caliper-backend-codex", "codex"),
    "pi": ("caliper-backend-pi", "pi"),
    "hermes": ("caliper-backend-hermes", "hermes"),
    "gemini": ("caliper-backend-gemini", "gemini"),
    "expect": ("caliper-judge-llm", None),
}


def install_command(plugin_id: str) -> str | None:
    """The command that installs a known first-party plugin, or ``None`` for unknown ones.

    Written for the way this install was made and pinned to the running version
    (:mod:`caliper.host.install_hints`), so it can never fetch another project of the same name.
    """
    known = KNOWN_DISTRIBUTIONS.get(plugin_id)
    if known is None:
        return None
    from caliper.host.install_hints import add_distribution

    return add_distribution(known[0])
