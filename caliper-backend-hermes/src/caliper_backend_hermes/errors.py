"""Why a Hermes run failed, read from its exit status, its session and its own error log.

``hermes chat --query --quiet`` prints a provider error as if it were the answer. Caliper never
reads that text: a run failed when Hermes exited non-zero, and the cause comes from the lines
Hermes logs to ``$HERMES_HOME/logs/errors.log`` for the session (``error_type=…``, the HTTP
status) or, when no session ever started, from the fact that none did.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from caliper.plugin.agent_ending import AgentEnding, status_for_http
from caliper.plugin.attempt import AgentStatus

LOGIN_HINT = (
    "Run `hermes model` to choose a provider and model you have access to "
    "(and `hermes login` if your login expired), then try again."
)

_STATUS = re.compile(r"(?:HTTP |Error code: |status[ _]code[=: ]+)(\d{3})\b")
_ERROR_TYPE = re.compile(r"error_type=(\w+)")
_SUMMARY = re.compile(r"summary=(.*)$")
_MODEL_CALL = re.compile(r"error_type=|API call failed|Error code: \d{3}|Non-retryable")

_AUTH_TYPES = frozenset({"AuthenticationError", "PermissionDeniedError"})
_INFRA_TYPES = frozenset(
    {
        "RateLimitError",
        "InternalServerError",
        "APIConnectionError",
        "APITimeoutError",
        "ServiceUnavailableError",
        "ConnectError",
        "ReadTimeout",
        "RemoteProtocolError",
    }
)


def session_error_lines(hermes_home: Path, session_id: str | None) -> list[str]:
    """Error-log lines Hermes wrote for ``session_id`` (all of them when the id is unknown)."""
    try:
        text = (hermes_home / "logs" / "errors.log").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    lines = [line for line in text.splitlines() if _MODEL_CALL.search(line)]
    if session_id:
        tagged = [line for line in lines if f"[{session_id}]" in line]
        return tagged or lines
    return lines


def classify_api_failure(lines: Sequence[str], stderr_tail: str = "") -> AgentEnding:
    """The failure a model-call error implies (401/403 → setup; 429/5xx/network → infra).

    With no model-call error logged, Hermes failed some other way: an infra error carrying
    the end of its stderr.
    """
    statuses = [int(m.group(1)) for line in lines for m in _STATUS.finditer(line)]
    types = [m.group(1) for line in lines for m in _ERROR_TYPE.finditer(line)]
    summaries = [m.group(1).strip() for line in lines if (m := _SUMMARY.search(line))]
    detail = summaries[-1] if summaries else (lines[-1].split(": ", 1)[-1] if lines else "")
    status = statuses[-1] if statuses else None
    kind = types[-1] if types else None
    if kind in _AUTH_TYPES or status_for_http(status) is AgentStatus.SETUP_ERROR:
        return AgentEnding(
            AgentStatus.SETUP_ERROR,
            f"Hermes' model provider refused the request ({detail or kind or status}). "
            + LOGIN_HINT,
        )
    if kind in _INFRA_TYPES or status == 429 or (status is not None and status >= 500):
        what = "rate-limited" if status == 429 or kind == "RateLimitError" else "failed"
        return AgentEnding(
            AgentStatus.INFRA_ERROR,
            f"Hermes' model provider {what}: {detail or kind or status}",
        )
    if detail:
        return AgentEnding(AgentStatus.INFRA_ERROR, f"Hermes' model call failed: {detail}")
    tail = stderr_tail.strip()
    return AgentEnding(
        AgentStatus.INFRA_ERROR,
        f"Hermes failed without logging a model error:\n{tail}"
        if tail
        else "Hermes failed without logging a model error or printing anything on stderr.",
    )


def classify_no_session(exit_code: int | None, stdout: str, stderr: str) -> AgentEnding:
    """Hermes exited before starting a session: it had no usable model or login.

    A Python traceback instead means Hermes itself crashed (an infrastructure error).
    """
    if "Traceback (most recent call last)" in stderr:
        tail = "\n".join(stderr.strip().splitlines()[-8:])
        return AgentEnding(AgentStatus.INFRA_ERROR, f"Hermes crashed (exit {exit_code}):\n{tail}")
    said = " ".join((stdout.strip() or stderr.strip()).split())
    said = said[:400] + ("…" if len(said) > 400 else "")
    return AgentEnding(
        AgentStatus.SETUP_ERROR,
        "Hermes could not start a session: no model is selected or the provider login is "
        f"missing or expired (exit {exit_code}; Hermes said: {said or 'nothing'}). " + LOGIN_HINT,
    )
