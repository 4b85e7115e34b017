"""Ask a model for revised descriptions, through the interface LLM judges use.

The proposer is any installed backend's :meth:`Backend.run_prompt` (one tool-less question
in a fresh isolated sandbox). It is shown the skill's name, the current description and the
training failures (prompts that should have loaded the skill and did not, and the reverse),
and answers with JSON ``{"descriptions": ["...", ...]}``. Every candidate is checked against
the Agent Skills limits; when none is usable the proposer is asked once more with the
problems, and what is still unusable is dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from caliper.errors import UsageError
from caliper.plugin.attempt import AgentStatus, PromptRequest
from caliper.plugin.sandbox import make_sandbox, remove_sandbox
from caliper.system import attrs_classes
from caliper.tune.description import description_problems

if TYPE_CHECKING:
    from caliper.host.engine import Engine
    from caliper.plugin.attempt import Usage

PROPOSER_MARKER = "[caliper-tune-proposal]"
"""Text every proposer prompt contains, so scripted model servers can recognise it."""
PROMPT_VERSION = "tune-proposal-1"
PROPOSER_TIMEOUT = 180.0
MAX_EXAMPLES = 12


@attrs_classes.frozen
class Failures:
    """What the incumbent got wrong on train: prompts it missed and prompts it fired on
    wrongly (each with how many of its attempts went wrong), and prompts it got right."""

    missed: tuple[tuple[str, int, int], ...] = ()
    false_fires: tuple[tuple[str, int, int], ...] = ()
    right: tuple[str, ...] = ()


@attrs_classes.frozen
class Proposal:
    """The usable candidates of one proposer call, what was dropped and why, and its cost."""

    candidates: tuple[str, ...]
    dropped: tuple[tuple[str, str], ...] = ()
    calls: int = 0
    tokens: int = 0
    error: str | None = None


def _examples(rows: Sequence[tuple[str, int, int]]) -> str:
    if not rows:
        return "  (none)\n"
    shown = [f"  - {json.dumps(p)} ({bad} of {n} attempts)\n" for p, bad, n in rows[:MAX_EXAMPLES]]
    if len(rows) > MAX_EXAMPLES:
        shown.append(f"  - ... and {len(rows) - MAX_EXAMPLES} more\n")
    return "".join(shown)


def build_prompt(
    name: str,
    current: str,
    failures: Failures,
    count: int,
    *,
    tried: Sequence[str] = (),
    problems: Sequence[tuple[str, str]] = (),
) -> str:
    """The proposer's prompt (it carries :data:`PROPOSER_MARKER`)."""
    parts = [
        f"{PROPOSER_MARKER} ({PROMPT_VERSION})\n",
        "You improve the `description` of an agent skill. A coding agent sees only the skill's "
        "name and description when deciding whether to load it, so the description must make "
        "the agent load the skill for the requests it serves and leave it alone otherwise.\n\n",
        f"Skill name (fixed): {name}\n",
        f"Current description: {current}\n\n",
        "Requests that SHOULD have loaded the skill but did not:\n",
        _examples(failures.missed),
        "Requests that should NOT have loaded the skill but did:\n",
        _examples(failures.false_fires),
    ]
    if failures.right:
        parts.append("Requests already handled correctly (keep them so):\n")
        parts.append(
            _examples([(p, 0, 0) for p in failures.right]).replace(" (0 of 0 attempts)", "")
        )
    if tried:
        parts.append("Descriptions already tried (do not repeat them):\n")
        parts.extend(f"  - {json.dumps(t)}\n" for t in tried)
    if problems:
        parts.append("Your previous answer was unusable:\n")
        parts.extend(f"  - {json.dumps(t)}: {why}\n" for t, why in problems)
    parts.append(
        f"\nWrite {count} different revised descriptions. Each must be plain text on one line, "
        "at most 1024 characters, with no XML tags, and must not change the skill's name. "
        'Answer with JSON only: {"descriptions": ["...", "..."]}\n'
    )
    return "".join(parts)


_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.S)


def parse_descriptions(text: str | None) -> list[str] | None:
    """The ``descriptions`` list of the answer's JSON object (fenced or bare), or ``None``."""
    if not text:
        return None
    candidates = [m.group(1) for m in _FENCED.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start : end + 1])
    for blob in candidates:
        try:
            data = json.loads(blob)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and isinstance(data.get("descriptions"), list):
            return [d for d in data["descriptions"] if isinstance(d, str)]
    return None


def _usage_tokens(usage: Usage | None) -> int:
    return (usage.total_tokens or 0) if usage is not None else 0


def _ask(engine: Engine, prompt: str, workspace: Path) -> tuple[str | None, int, str | None]:
    sandbox = make_sandbox(spec_dir=workspace, prefix="caliper-tune-proposer-")
    try:
        result = engine.backend.run_prompt(
            PromptRequest(
                prompt=prompt, model=engine.model, sandbox=sandbox, timeout=PROPOSER_TIMEOUT
            )
        )
    except NotImplementedError as exc:
        raise UsageError(
            f"{exc} It cannot propose descriptions either.",
            hint="Pass --proposer-model BACKEND[:MODEL] naming a backend that can answer a "
            "prompt (claude-code, codex, pi, hermes).",
        ) from None
    finally:
        remove_sandbox(sandbox)
    tokens = _usage_tokens(result.usage)
    if result.status is not AgentStatus.COMPLETED:
        return None, tokens, result.error or result.status.value
    return result.text, tokens, None


def _screen(
    texts: Sequence[str], name: str, seen: set[str]
) -> tuple[list[str], list[tuple[str, str]]]:
    usable, dropped = [], []
    for raw in texts:
        text = " ".join(raw.split())
        problems = description_problems(text)
        if text in seen:
            problems.append("was already tried")
        if problems:
            dropped.append((raw, "; ".join(problems)))
            continue
        seen.add(text)
        usable.append(text)
    return usable, dropped


def propose(
    engine: Engine,
    name: str,
    current: str,
    failures: Failures,
    count: int,
    *,
    tried: Sequence[str],
    workspace: Path,
) -> Proposal:
    """Ask for ``count`` candidates; re-ask once when none is usable (see module doc)."""
    seen = {current, *tried}
    calls = tokens = 0
    problems: list[tuple[str, str]] = []
    all_dropped: list[tuple[str, str]] = []
    error = None
    for _ in range(2):
        prompt = build_prompt(name, current, failures, count, tried=tried, problems=problems)
        text, used, error = _ask(engine, prompt, workspace)
        calls += 1
        tokens += used
        if error is not None:
            break
        parsed = parse_descriptions(text)
        if parsed is None:
            shown = (text or "").strip()[:200] or "(empty answer)"
            problems = [(shown, 'held no JSON {"descriptions": [...]}')]
            all_dropped.extend(problems)
            continue
        usable, dropped = _screen(parsed[:count], name, seen)
        all_dropped.extend(dropped)
        if usable:
            return Proposal(tuple(usable), tuple(all_dropped), calls, tokens)
        problems = dropped or [("(nothing)", "the list was empty")]
    return Proposal((), tuple(all_dropped), calls, tokens, error)
