"""Split a probe set into train and test probes: seeded, stratified by expected activation."""

from __future__ import annotations

import random
from collections.abc import Sequence

from caliper.system import attrs_classes
from caliper.tune.probes import Probe

DEFAULT_TEST_FRACTION = 0.4


@attrs_classes.frozen
class Split:
    """Which probes choose the description (``train``) and which only judge it (``test``)."""

    train: tuple[Probe, ...]
    test: tuple[Probe, ...]
    seed: int
    test_fraction: float

    def to_json(self) -> dict:
        """Plain data (saved as ``split.json``)."""
        return {
            "seed": self.seed,
            "test_fraction": self.test_fraction,
            "train": [p.to_json() for p in self.train],
            "test": [p.to_json() for p in self.test],
        }


def stratum(probe: Probe, target: str) -> str:
    """The group a probe is stratified by: its expected activation of the tuned skill
    (``should-trigger`` / ``should-not``), or the exact set for competing-skill probes."""
    if probe.activates is not None and set(probe.activates) - {target}:
        return "activates:" + ",".join(sorted(probe.activates))
    return "should-trigger" if probe.expects_target(target) else "should-not"


def split_probes(
    probes: Sequence[Probe], target: str, *, seed: int, test_fraction: float = DEFAULT_TEST_FRACTION
) -> Split:
    """Shuffle each stratum with ``random.Random(seed)`` and send ``round(n × fraction)`` of
    it to test, keeping at least one probe of every stratum in train (and, for strata of two
    or more, at least one in test). Probe order within each side follows the input."""
    rng = random.Random(seed)
    groups: dict[str, list[int]] = {}
    for index, probe in enumerate(probes):
        groups.setdefault(stratum(probe, target), []).append(index)
    test_indexes: set[int] = set()
    for key in sorted(groups):
        members = groups[key][:]
        rng.shuffle(members)
        count = round(len(members) * test_fraction)
        count = max(1, min(count, len(members) - 1)) if len(members) >= 2 else 0
        test_indexes.update(members[:count])
    train = tuple(p for i, p in enumerate(probes) if i not in test_indexes)
    test = tuple(p for i, p in enumerate(probes) if i in test_indexes)
    return Split(train=train, test=test, seed=seed, test_fraction=test_fraction)
