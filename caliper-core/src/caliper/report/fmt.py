"""Short human forms of the numbers reports show (percentages, token counts, durations)."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

from caliper.results.outcome import Outcome

if TYPE_CHECKING:
    from caliper.results.stats import Interval

DASH = "—"
BAR_WIDTH = 20
# caliper.results.stats.UNINFORMATIVE and EXCLUDING_ZERO (not imported: fmt stays light)
UNINFORMATIVE = "uninformative"
EXCLUDING_ZERO = ", excluding 0"

STRIP_SYMBOLS = {
    Outcome.PASS: ("✓", "green"),
    Outcome.TASK_FAIL: ("✗", "red"),
    Outcome.CHEAT: ("✗", "magenta"),
    Outcome.INFRA_ERROR: ("⊘", "yellow"),
    Outcome.TIMEOUT: ("◷", "red"),
    Outcome.JUDGE_ERROR: ("⊘", "yellow"),
    Outcome.NOT_CHECKED: ("·", "dim"),
}
_STRIP_PIECES: dict[Outcome | str, str] = {
    key: f"[{style}]{symbol}[/{style}]"
    for outcome, (symbol, style) in STRIP_SYMBOLS.items()
    for key in (outcome, outcome.value)
}
"""Each outcome's (and its value's) markup in an attempt strip."""


def pct(value: float | None) -> str:
    """``0.667`` → ``66.7%``; ``None`` → ``—``."""
    return DASH if value is None else f"{value * 100:.1f}%"


def _bound(value: float, digits: int) -> str:
    if value in (0.0, 1.0):
        return f"{value * 100:.0f}"
    return f"{value * 100:.{digits}f}"


def interval(value: Interval | None, *, digits: int = 1) -> str:
    """An interval as ``[20.8–93.9]`` (percent, ``digits`` decimals; exact ends as ``0`` and
    ``100``); ``(uninformative)`` for too few tries (``(n<3)`` at ``digits=0``, the narrow form);
    ``""`` for ``None``."""
    if value is None:
        return ""
    if value.method == UNINFORMATIVE:  # round brackets: rich would read [word] as markup
        return "(n<3)" if digits == 0 else "(uninformative)"
    return f"[{_bound(value.low, digits)}–{_bound(value.high, digits)}]"


def pct_interval(value: float | None, bounds: Interval | None, *, stacked: bool = False) -> str:
    """``66.7% [20.8–93.9]``; ``stacked`` puts the interval, in whole percents, on a second
    line (``[21–94]``, or ``(too few)`` for an uninformative one, for narrow tables); ``—``
    when there is no rate."""
    if value is None:
        return DASH
    if bounds is None:
        return pct(value)
    if stacked:
        return f"{pct(value)}\n{interval(bounds, digits=0)}"
    return f"{pct(value)} {interval(bounds)}"


def signed_points(value: float | None) -> str:
    """A difference of rates in percentage points: ``-0.333`` → ``−33 pts``; ``None`` → ``—``."""
    if value is None:
        return DASH
    points = round(value * 100)
    sign = "+" if points > 0 else "−" if points < 0 else "±"
    return f"{sign}{abs(points)} pts"


def signed_interval(value: Interval | None) -> str:
    """A difference interval in points: ``[+18, +62]``; ``""`` for ``None``."""
    if value is None:
        return ""
    if value.method.endswith(EXCLUDING_ZERO):  # open at 0: the test rejects "no change"
        left = "(" if value.low == 0.0 else "["
        right = ")" if value.high == 0.0 else "]"
        return f"{left}{_signed(value.low)}, {_signed(value.high)}{right}"
    return f"[{_signed(value.low)}, {_signed(value.high)}]"


def _signed(value: float) -> str:
    points = round(value * 100)
    return f"+{points}" if points > 0 else f"−{abs(points)}" if points < 0 else "0"


def p_value(value: float | None) -> str:
    """A p-value as ``p=0.003``, ``p<0.001`` or ``p=1``; ``""`` for ``None``."""
    if value is None:
        return ""
    if value < 0.001:
        return "p<0.001"
    if value >= 0.995:
        return "p=1"
    return f"p={value:.3f}" if value < 0.1 else f"p={value:.2f}"


def signed_pct(value: float | None) -> str:
    """``0.5`` → ``+50.0%``; ``None`` → ``—``."""
    return DASH if value is None else f"{value * 100:+.1f}%"


def tokens(value: int | float | None) -> str:
    """``950`` → ``950``, ``2_700`` → ``2.7K``, ``79_400`` → ``79K``, ``1_234_567`` → ``1.2M``."""
    if value is None:
        return DASH
    sign = "-" if value < 0 else ""
    value = abs(value)
    if value >= 1_000_000:
        return f"{sign}{value / 1_000_000:.1f}M"
    if value >= 10_000:
        return f"{sign}{value / 1_000:.0f}K"
    if value >= 1_000:
        return f"{sign}{value / 1_000:.1f}K"
    return f"{sign}{value:.0f}"


def duration(seconds: float | None) -> str:
    """``4.25`` → ``4.2s``, ``27.3`` → ``27s``, ``60`` → ``1m 0s``, ``3725`` → ``1h 2m``."""
    if seconds is None:
        return DASH
    sign = "-" if seconds < 0 else ""
    if abs(seconds) < 10:
        return f"{sign}{abs(seconds):.1f}s"
    whole = round(abs(seconds))
    if whole < 60:
        return f"{sign}{whole}s"
    if whole < 3600:
        return f"{sign}{whole // 60}m {whole % 60}s"
    return f"{sign}{whole // 3600}h {whole % 3600 // 60}m"


def clock_span(seconds: float | None) -> str:
    """A span between two of a run's timestamps, which are whole seconds: as
    :func:`duration`, except that one under a second reads ``under 1s``, not ``0.0s``."""
    if seconds is not None and 0 <= seconds < 1:
        return "under 1s"
    return duration(seconds)


def seconds(value: float | None) -> str:
    """A per-attempt time with one decimal: ``12.6s``."""
    return DASH if value is None else f"{value:.1f}s"


def bar(value: float | None, width: int = BAR_WIDTH) -> str:
    """A text bar filled in proportion to ``value`` (0..1)."""
    if value is None:
        return "░" * width
    filled = max(0, min(width, round(value * width)))
    return "█" * filled + "░" * (width - filled)


def strip_markup(outcomes: list[Outcome] | list[str]) -> str:
    """Rich markup of an attempt strip: one symbol per attempt, in order."""
    try:
        return "".join([_STRIP_PIECES[outcome] for outcome in outcomes]) or DASH
    except KeyError:  # neither an Outcome nor one's value: Outcome() says which
        for outcome in outcomes:
            Outcome(outcome)
        raise


def tail(text: str | None, *, lines: int = 12, chars: int = 800) -> str:
    """The last ``lines`` lines (at most ``chars`` characters) of ``text``."""
    if not text:
        return ""
    kept = "\n".join(text.rstrip().splitlines()[-lines:])
    if len(kept) > chars:
        kept = "…" + kept[-chars:]
    elif len(kept) < len(text.rstrip()):
        kept = "…\n" + kept
    return kept


def when_label(iso: str | None) -> str:
    """An ISO timestamp as ``YYYY-MM-DD HH:MM`` in UTC (the raw text if it does not parse)."""
    if not iso:
        return "unknown time"
    try:
        when = datetime.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    if when.tzinfo is not None:
        when = when.astimezone(datetime.timezone.utc)
    return when.strftime("%Y-%m-%d %H:%M")
