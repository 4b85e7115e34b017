"""The backend-neutral size of a skill listing, and the size below which it is not checked.

Its own module, free of imports, so ``caliper validate`` can tell whether a spec's listing is
long enough to be worth asking the backends about without importing :mod:`caliper.plugin.backend`.
"""

from __future__ import annotations

from collections.abc import Sequence

LISTING_CHECK_FLOOR = 4000
"""Below this many characters of skill listing, ``caliper validate`` loads no backend."""


def listing_chars(skills: Sequence[tuple[str, str]]) -> int:
    """A backend-neutral size of a listing: one ``- name: description`` line per skill."""
    return sum(len(name) + len(description) + 4 for name, description in skills)
