"""Deciding how a ``gemini`` run ended, from its events and exit code only.

Gemini CLI exits with an API error's HTTP status truncated to a byte (401 → 145, 429 → 173,
500 → 244), and its final ``result`` event says ``status: error``. For a 429 it rewrites the
message, so the exit code is where the status survives. Hence:

* 401/403, a bad or missing key (exit 41: no usable auth) → ``SETUP_ERROR``;
* 404 (an unknown model), exit 52 (bad settings), exit 42 (bad input) → ``SETUP_ERROR``;
* 429 and 5xx, any other failure → ``INFRA_ERROR``;
* a run killed at the timeout → ``TIMEOUT``.
"""

from __future__ import annotations

from caliper.plugin import ProcessResult
from caliper.plugin.agent_ending import COMPLETED, AgentEnding, stopped_early
from caliper.plugin.attempt import AgentStatus
from caliper_backend_gemini.events import GeminiRun

LOGIN_HINT = (
    "Set GEMINI_API_KEY (or log in with `gemini` and choose Login with Google), then try again."
)
AUTH_EXIT = 41
INPUT_EXIT = 42
CONFIG_EXIT = 52
SETUP_STATUSES = {400, 401, 403, 404}


def http_status(returncode: int) -> int | None:
    """The HTTP status an exit code stands for (status mod 256 for 400-511), else ``None``."""
    if 144 <= returncode <= 255:
        return returncode + 256
    return None


def classify(process: ProcessResult, run: GeminiRun, *, timeout: float) -> AgentEnding:
    """How the run ended (see the module docstring)."""
    early = stopped_early(process, agent="gemini", timeout=timeout)
    if early is not None:
        return early
    if run.succeeded and process.returncode == 0:
        return COMPLETED
    message = run.failure or process.stderr_tail(8) or "no output"
    status = http_status(process.returncode)
    if process.returncode == AUTH_EXIT or status in (401, 403):
        return AgentEnding(AgentStatus.SETUP_ERROR, f"gemini reported: {message}\n{LOGIN_HINT}")
    if process.returncode in (INPUT_EXIT, CONFIG_EXIT) or status in SETUP_STATUSES:
        return AgentEnding(AgentStatus.SETUP_ERROR, f"gemini refused to run: {message}")
    if process.returncode == 127 or not run.event_count:
        tail = process.stderr_tail(8) or "no output"
        kind = AgentStatus.SETUP_ERROR if process.returncode == 127 else AgentStatus.INFRA_ERROR
        return AgentEnding(kind, f"gemini exited with status {process.returncode}: {tail}")
    where = f" (HTTP {status})" if status else ""
    return AgentEnding(
        AgentStatus.INFRA_ERROR,
        f"gemini exited with status {process.returncode}{where}: {message}",
    )
