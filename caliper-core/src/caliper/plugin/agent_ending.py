"""How one agent CLI run ended: the ``(status, error)`` record every backend classifies into.

A backend reads its CLI's structured output (never the agent's prose) and decides an
:class:`AgentEnding`. What is the same for every agent lives here: a run killed at its time budget
or by Ctrl-C (:func:`stopped_early`), the HTTP status table (:func:`status_for_http`) and the
step from an ending to the result the core receives (:meth:`AgentEnding.prompt_result`). The
record is not :class:`caliper.results.models.Outcome` (the scored verdict of an attempt): an
ending is only what the CLI said about itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from caliper.plugin.attempt import AgentStatus, AttemptResult, PromptResult
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.plugin.attempt import Usage
    from caliper.system.process import ProcessResult

INTERRUPTED = "The run was interrupted."

SETUP_HTTP_STATUSES = frozenset({401, 402, 403, 404})
"""Provider answers no retry can fix: refused login or key (401), billing (402), no access
(403), unknown model or endpoint (404). The run stops with the user's fix."""


@attrs_classes.frozen
class AgentEnding:
    """A status and, for anything but ``COMPLETED``, the reason in one paragraph."""

    status: AgentStatus
    error: str | None = None

    @property
    def completed(self) -> bool:
        """Whether the agent finished (the judges then decide whether it did the task)."""
        return self.status is AgentStatus.COMPLETED

    def attempt_result(self, **observed: Any) -> AttemptResult:
        """The attempt's result with this status and error, plus what else was ``observed``
        (any :class:`~caliper.plugin.attempt.AttemptResult` field: transcript, usage, timings…)."""
        return AttemptResult(status=self.status, error=self.error, **observed)

    def prompt_result(
        self, text: str | None, *, model: str | None = None, usage: Usage | None = None
    ) -> PromptResult:
        """The judge-call result: the answer only when the run completed."""
        return PromptResult(
            status=self.status,
            text=text if self.completed else None,
            model=model,
            usage=usage,
            error=self.error,
        )


COMPLETED = AgentEnding(AgentStatus.COMPLETED)


def stopped_early(
    process: ProcessResult, *, agent: str, timeout: float, detail: str = ""
) -> AgentEnding | None:
    """The ending of a run killed at ``timeout`` (``TIMEOUT``) or interrupted (``INFRA_ERROR``),
    else ``None``: every backend checks this first, before reading the CLI's output.

    ``agent`` is the CLI's display name; ``detail`` a sentence added to the timeout message
    (e.g. what the CLI was still retrying).
    """
    if process.timed_out:
        said = f"{agent} did not finish within {timeout:g}s and was stopped."
        return AgentEnding(AgentStatus.TIMEOUT, f"{said} {detail}" if detail else said)
    if process.interrupted:
        return AgentEnding(AgentStatus.INFRA_ERROR, INTERRUPTED)
    return None


def status_for_http(code: int | None) -> AgentStatus:
    """The status a provider's HTTP error stands for, in every backend.

    :data:`SETUP_HTTP_STATUSES` stop the run (``SETUP_ERROR``); everything else (408, 409,
    429, 529, any 5xx, an unknown status or none at all: a network failure) is the
    provider's or the network's fault (``INFRA_ERROR``, which ``--retries`` may retry).
    """
    return AgentStatus.SETUP_ERROR if code in SETUP_HTTP_STATUSES else AgentStatus.INFRA_ERROR


def shorten(text: str, limit: int = 400) -> str:
    """``text`` on one line, cut at ``limit`` characters with an ellipsis (for messages)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"
