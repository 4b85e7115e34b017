"""Deciding how a ``codex exec`` run ended, from its events and exit code only.

Failures arrive as top-level ``error`` events and a final ``turn.failed`` (exit code 1). The
messages are Codex's own (they quote the provider's HTTP status), never the agent's prose:

* 401/403, a missing ``env_key`` variable, no login → ``SETUP_ERROR`` (the run stops);
* an unknown or unavailable model → ``SETUP_ERROR``;
* 429, 5xx, overload, a dropped stream (after Codex's own bounded retries) → ``INFRA_ERROR``;
* the context window overflowing → ``TASK_FAILED``;
* a run killed at the timeout → ``TIMEOUT`` (Codex retries a refused connection forever).
"""

from __future__ import annotations

import re

from caliper.plugin import ProcessResult
from caliper.plugin.agent_ending import COMPLETED, AgentEnding, stopped_early
from caliper.plugin.attempt import AgentStatus
from caliper_backend_codex.events import CodexRun

LOGIN_HINT = (
    "Log in with `codex login`, or set OPENAI_API_KEY (or the `env_key` variable of your "
    "model provider) in the environment caliper runs in, then try again."
)
_AUTH = re.compile(
    r"\b(401|403)\b|unauthori[sz]ed|forbidden|invalid[_ ]api[_ ]key|incorrect api key"
    r"|missing environment variable|not logged in|please log ?in|login required"
    r"|authentication|refresh token",
    re.IGNORECASE,
)
_MODEL = re.compile(
    r"model[_ ]not[_ ]found|model .{0,80}(is not supported|does not exist|not available)"
    r"|unsupported model|unknown model",
    re.IGNORECASE,
)
_CONTEXT = re.compile(r"context window|context_length_exceeded|maximum context", re.IGNORECASE)
_RECONNECT = re.compile(r"reconnecting|waiting for network|connection failed", re.IGNORECASE)


def _failure_message(run: CodexRun) -> str | None:
    if run.failure:
        return run.failure
    final = [m for m in run.errors if not _RECONNECT.search(m)]
    return final[-1] if final else (run.errors[-1] if run.errors else None)


def classify_message(message: str) -> AgentStatus:
    """The status a Codex failure message stands for."""
    if _AUTH.search(message):
        return AgentStatus.SETUP_ERROR
    if _MODEL.search(message):
        return AgentStatus.SETUP_ERROR
    if _CONTEXT.search(message):
        return AgentStatus.TASK_FAILED
    return AgentStatus.INFRA_ERROR


def _startup_failure(process: ProcessResult) -> AgentEnding:
    tail = process.stderr_tail(8) or "no output"
    if process.returncode == 127 or "could not start" in process.stderr:
        return AgentEnding(AgentStatus.SETUP_ERROR, f"codex could not be started: {tail}")
    if process.returncode == 2 and "unexpected argument" in process.stderr:
        return AgentEnding(
            AgentStatus.SETUP_ERROR,
            f"codex rejected caliper's command line (is it too old?): {tail}",
        )
    if "config.toml" in process.stderr or "mcp" in process.stderr.lower():
        return AgentEnding(
            AgentStatus.SETUP_ERROR,
            f"codex refused to start with the attempt's configuration: {tail}",
        )
    return AgentEnding(
        AgentStatus.INFRA_ERROR,
        f"codex exited with status {process.returncode} without any event: {tail}",
    )


def classify(process: ProcessResult, run: CodexRun, *, timeout: float) -> AgentEnding:
    """How the run ended (see the module docstring)."""
    waiting = [m for m in run.errors if _RECONNECT.search(m)]
    detail = f"It was still retrying the model provider: {waiting[-1]}" if waiting else ""
    early = stopped_early(process, agent="codex", timeout=timeout, detail=detail)
    if early is not None:
        return early
    message = _failure_message(run)
    if run.completed and process.returncode == 0 and run.failure is None:
        if run.unreadable:  # a turn that completed, with items caliper could not read
            return AgentEnding(
                AgentStatus.INFRA_ERROR,
                "codex sent output caliper could not read: " + "; ".join(run.unreadable[:3]),
            )
        return COMPLETED
    if message is not None and (run.failure is not None or not run.completed):
        status = classify_message(message)
        text = f"codex reported: {message}"
        if status is AgentStatus.SETUP_ERROR and _AUTH.search(message):
            text = f"{text}\n{LOGIN_HINT}"
        return AgentEnding(status, text)
    if not run.usable:
        return _startup_failure(process)
    tail = process.stderr_tail(8)
    detail = f": {tail}" if tail else ""
    if process.returncode == 0:
        return AgentEnding(
            AgentStatus.INFRA_ERROR, f"codex ended without completing its turn{detail}"
        )
    return AgentEnding(
        AgentStatus.INFRA_ERROR, f"codex exited with status {process.returncode}{detail}"
    )
