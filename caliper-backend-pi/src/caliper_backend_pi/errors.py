"""How a pi run ended, decided from pi's structured output only.

In JSON mode pi exits 0 even when the provider refused every request; the truth is the
final assistant message's ``stopReason`` (``error`` or ``aborted`` on failure) and its
``errorMessage``, which starts with the provider's HTTP status (``401 …`` on 0.7x,
``401: {…}`` on 1.x) or names a connection failure. A non-zero exit means pi refused to
start (no model, no key, unknown provider) and said why on stderr.
"""

from __future__ import annotations

import re

from caliper.plugin import ProcessResult
from caliper.plugin.agent_ending import (
    COMPLETED,
    AgentEnding,
    shorten,
    status_for_http,
    stopped_early,
)
from caliper.plugin.attempt import AgentStatus
from caliper_backend_pi.events import PiRun, message_text

_STATUS = re.compile(r"^\s*(?:error\s*)?(\d{3})\b")
_SETUP_STDERR = (
    "no api key found",
    "no models available",
    "unknown provider",
    "not found. use --list-models",
    "no model selected",
    "failed to load extension",
)

AUTH_HINT = (
    "pi was refused by the provider ({detail}). Check the model name, and the login or API key "
    "pi uses for it: run `pi` and `/login`, set the provider's API key variable, or fix "
    "`apiKey` in ~/.pi/agent/models.json."
)


def http_status(error_message: str) -> int | None:
    """The HTTP status an ``errorMessage`` starts with, if any."""
    match = _STATUS.match(error_message)
    return int(match.group(1)) if match else None


def classify_error_message(error_message: str) -> AgentEnding:
    """Status for a final assistant message with ``stopReason: error``."""
    detail = error_message.strip() or "no error message"
    status = http_status(detail)
    if status_for_http(status) is AgentStatus.SETUP_ERROR:
        return AgentEnding(AgentStatus.SETUP_ERROR, AUTH_HINT.format(detail=_short(detail)))
    if status is None and "no api key" in detail.lower():
        return AgentEnding(AgentStatus.SETUP_ERROR, AUTH_HINT.format(detail=_short(detail)))
    return AgentEnding(AgentStatus.INFRA_ERROR, f"the model provider failed: {_short(detail)}")


_short = shorten


def classify_run(process: ProcessResult, run: PiRun, *, timeout: float) -> AgentEnding:
    """Decide how a pi process ended from its exit, its events and (for start-up) stderr."""
    early = stopped_early(process, agent="pi", timeout=timeout)
    if early is not None:
        return early
    last = run.last_assistant
    if last is not None:
        reason = last.get("stopReason")
        if reason == "error":
            return classify_error_message(str(last.get("errorMessage") or ""))
        if reason == "aborted":
            detail = str(last.get("errorMessage") or "no reason given")
            return AgentEnding(AgentStatus.INFRA_ERROR, f"pi aborted the run: {_short(detail)}")
        if reason == "length" and not message_text(last).strip():
            return AgentEnding(
                AgentStatus.TASK_FAILED,
                "the model stopped at its output-token limit before answering",
            )
    if process.returncode not in (0, None):
        tail = process.stderr_tail(10)
        lowered = tail.lower()
        status = (
            AgentStatus.SETUP_ERROR
            if last is None and any(marker in lowered for marker in _SETUP_STDERR)
            else AgentStatus.INFRA_ERROR
        )
        detail = _short(tail, 800) if tail else "no output on stderr"
        return AgentEnding(status, f"pi exited with status {process.returncode}: {detail}")
    if last is None:
        tail = process.stderr_tail(10)
        detail = f": {_short(tail, 800)}" if tail else ""
        return AgentEnding(AgentStatus.INFRA_ERROR, f"pi printed no assistant message{detail}")
    if last.get("stopReason") == "toolUse":
        return AgentEnding(AgentStatus.INFRA_ERROR, "pi stopped before the model's tool calls ran")
    return COMPLETED
