"""Deciding how a ``claude`` run ended, from its structured output only.

The ``result`` line says whether the run failed (``is_error``), why (``subtype``,
``terminal_reason``, ``api_error_status``) and the synthetic assistant line before it names the
API error (``authentication_failed``, ``rate_limit``…). The agent's own words are never read.
Note that API failures still carry ``subtype: "success"``: only ``is_error`` is trustworthy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from caliper.plugin import ProcessResult
from caliper.plugin.agent_ending import COMPLETED, AgentEnding, status_for_http, stopped_early
from caliper.plugin.attempt import AgentStatus
from caliper_backend_claude.events import ClaudeStream

LOGIN_HINT = (
    "Log in with `claude /login` (Claude subscription) or set ANTHROPIC_API_KEY in the "
    "environment caliper runs in, then try again."
)
AUTH_ERRORS = {"authentication_failed", "billing_error", "oauth_org_not_allowed"}
TASK_SUBTYPES = {"error_max_turns", "error_max_budget_usd", "error_max_structured_output_retries"}
TASK_TERMINAL_REASONS = {"max_turns", "prompt_too_long"}


def _result_text(result: Mapping[str, Any]) -> str:
    errors = result.get("errors")
    if isinstance(errors, list) and errors:
        return "; ".join(str(e) for e in errors)
    text = result.get("result")
    return text.strip() if isinstance(text, str) and text.strip() else "no details given"


def _not_logged_in(stream: ClaudeStream) -> bool:
    """No credentials at all: the CLI answers without calling the API and says so."""
    result = stream.result or {}
    init = stream.init or {}
    return (
        result.get("api_error_status") is None
        and "authentication_failed" in stream.assistant_errors
    ) or (init.get("apiKeySource") == "none" and not stream.models and bool(result.get("is_error")))


def _api_failure(stream: ClaudeStream, result: Mapping[str, Any]) -> AgentEnding:
    status = result.get("api_error_status")
    detail = _result_text(result)
    codes = set(stream.assistant_errors)
    refused = status != 404 and status_for_http(status) is AgentStatus.SETUP_ERROR
    if refused or codes & AUTH_ERRORS or _not_logged_in(stream):
        return AgentEnding(
            AgentStatus.SETUP_ERROR,
            f"Claude Code could not authenticate ({detail}). {LOGIN_HINT}",
        )
    if status == 404:
        return AgentEnding(
            AgentStatus.SETUP_ERROR,
            f"The model was not found ({detail}). Check the model name given with --model.",
        )
    if result.get("terminal_reason") in TASK_TERMINAL_REASONS:
        return AgentEnding(AgentStatus.TASK_FAILED, f"Claude Code stopped: {detail}")
    if status is None:
        return AgentEnding(
            AgentStatus.INFRA_ERROR, f"Claude Code could not reach the model: {detail}"
        )
    return AgentEnding(AgentStatus.INFRA_ERROR, f"The model API failed (HTTP {status}): {detail}")


def classify(process: ProcessResult, stream: ClaudeStream, *, timeout: float) -> AgentEnding:
    """How the run ended: timeout, crash, API error, task failure or completion."""
    early = stopped_early(process, agent="Claude Code", timeout=timeout)
    if early is not None:
        return early
    result = stream.result
    if result is None:
        return _crash(process, stream)
    if stream.unreadable:
        return AgentEnding(
            AgentStatus.INFRA_ERROR,
            "Claude Code sent output caliper could not read: " + "; ".join(stream.unreadable[:3]),
        )
    subtype = result.get("subtype")
    if subtype in TASK_SUBTYPES or result.get("terminal_reason") == "max_turns":
        return AgentEnding(AgentStatus.TASK_FAILED, f"Claude Code stopped: {_result_text(result)}")
    if result.get("is_error"):
        return _api_failure(stream, result)
    if isinstance(subtype, str) and subtype.startswith("error"):
        return AgentEnding(
            AgentStatus.INFRA_ERROR, f"Claude Code failed ({subtype}): {_result_text(result)}"
        )
    return COMPLETED


def _crash(process: ProcessResult, stream: ClaudeStream) -> AgentEnding:
    """No ``result`` line: the CLI failed to start, crashed, or printed something else."""
    tail = process.stderr_tail(15)
    if not tail and stream.unparsed_lines:
        tail = "\n".join(process.stdout.strip().splitlines()[-15:])
    if process.returncode == 127 and not stream.events:
        return AgentEnding(AgentStatus.SETUP_ERROR, f"Could not start Claude Code: {tail}")
    what = "printed no result" if stream.events else "produced no stream-json output"
    detail = f":\n{tail}" if tail else " (nothing on stderr)."
    return AgentEnding(
        AgentStatus.INFRA_ERROR,
        f"Claude Code exited with status {process.returncode} and {what}{detail}",
    )


def retry_after(stream: ClaudeStream, status: AgentStatus) -> float | None:
    """Seconds Claude Code said it would wait before its next try (``retry_delay_ms`` of its
    last ``api_retry`` event, which follows the provider's ``Retry-After``), for an attempt
    that ended in an infra error after retrying; ``None`` otherwise."""
    if status is not AgentStatus.INFRA_ERROR or not stream.retries:
        return None
    delay = stream.retries[-1].get("retry_delay_ms")
    if isinstance(delay, (int, float)) and not isinstance(delay, bool) and delay >= 0:
        return delay / 1000.0
    return None
