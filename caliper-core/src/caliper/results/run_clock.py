"""How long a run took on the clock, as opposed to the time its agents spent.

A run's *wall clock* is the time from its start to its end as its metadata records them
(``started_at`` → ``finished_at``). Attempts run side by side (``--workers``), so the sum of
their durations (the *agent time*, :attr:`caliper.results.scoring.UsageTotals.wall_seconds`)
is usually longer. The derived kinds of run read as follows:

* a resumed run (``resumed_at`` set) spans from its first start to the end of its last
  resume, pauses included; ``last_session_seconds`` is the last resume's share alone;
* a merged run (``merged_from``) spans from the earliest shard start to the latest shard end;
* a ``regrade`` or ``retry`` run records its own start and end: the time that command took.

Pure: nothing is read or printed here.
"""

from __future__ import annotations

import datetime

import attrs

from caliper.results.models import RunMeta
from caliper.system import attrs_classes


@attrs_classes.frozen
class RunClock:
    """A run's wall clock (``seconds``; ``None`` when the run has no recorded end)."""

    seconds: float | None
    resumes: int = 0
    last_session_seconds: float | None = None
    """A resumed run: from its last resume to its end; ``None`` otherwise."""


def _parse(value: str | None) -> datetime.datetime | None:
    if not value:
        return None
    try:
        moment = datetime.datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment


def _span(start: str | None, end: str | None) -> float | None:
    first, last = _parse(start), _parse(end)
    if first is None or last is None or last < first:
        return None
    return (last - first).total_seconds()


def run_clock(meta: RunMeta) -> RunClock:
    """The wall clock of the run ``meta`` describes (see the module's rules)."""
    end = None if meta.incomplete else meta.finished_at
    resumes = len(meta.resumed_at)
    return RunClock(
        seconds=_span(meta.started_at, end),
        resumes=resumes,
        last_session_seconds=_span(meta.resumed_at[-1], end) if resumes else None,
    )


def clock_data(clock: RunClock) -> dict:
    """``clock`` as plain data (the ``wall_clock`` block of ``caliper report --format json``)."""
    return attrs.asdict(clock)
