"""Short human forms of the numbers reports show (percentages, token counts, durations)."""

from __future__ import annotations

from caliper.results.models import Outcome

DASH = "—"
BAR_WIDTH = 20

STRIP_SYMBOLS = {
    Outcome.PASS: ("✓", "green"),
    Outcome.TASK_FAIL: ("✗", "red"),
    Outcome.CHEAT: ("✗", "magenta"),
    Outcome.INFRA_ERROR: ("⊘", "yellow"),
    Outcome.TIMEOUT: ("⊘", "yellow"),
    Outcome.JUDGE_ERROR: ("⊘", "yellow"),
    Outcome.NOT_CHECKED: ("·", "dim"),
}


def pct(value: float | None) -> str:
    """``0.667`` → ``66.7%``; ``None`` → ``—``."""
    return DASH if value is None else f"{value * 100:.1f}%"


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
    parts = []
    for outcome in outcomes:
        symbol, style = STRIP_SYMBOLS[Outcome(outcome)]
        parts.append(f"[{style}]{symbol}[/{style}]")
    return "".join(parts) or DASH


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
