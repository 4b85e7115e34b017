"""How a judge's ``context.ask`` reaches the judge engine.

The core owns the one path from a judge's question to a model: resolve the ``--judge-model``
engine (lazily: only when a judge asks), pick the model (the one the engine names, else
``CALIPER_JUDGE_MODEL``, else the backend's
:attr:`~caliper.plugin.backend.Backend.default_judge_model`,
else the CLI's own default), run the backend's ``run_prompt`` in a fresh sandbox removed
afterwards, and hand the judge a typed :class:`~caliper.plugin.judge.Reply`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from caliper.host.engine import Engine
    from caliper.plugin.attempt import AttemptSandbox, PromptResult, Usage
    from caliper.plugin.backend import Backend
    from caliper.plugin.judge import Ask, JudgeUsage, Reply

JUDGE_MODEL_VARIABLE = "CALIPER_JUDGE_MODEL"
"""The model judge calls use when the judge engine names none (before the backend's pin)."""


def judge_model_for(backend: Backend, model: str | None) -> str | None:
    """The model a judge call on ``backend`` asks for (``None``: the CLI's own default)."""
    if model:
        return model
    return os.environ.get(JUDGE_MODEL_VARIABLE) or backend.default_judge_model


def judge_usage(usage: Usage | None) -> JudgeUsage | None:
    """A backend's :class:`~caliper.plugin.attempt.Usage` as the judge's typed usage."""
    from caliper.plugin.judge import JudgeUsage

    if usage is None:
        return None
    return JudgeUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_creation_tokens=usage.cache_creation_tokens,
    )


def _reply(result: PromptResult, backend: str, model: str | None, seconds: float) -> Reply:
    from caliper.plugin.attempt import AgentStatus
    from caliper.plugin.judge import Reply

    answered = result.status is AgentStatus.COMPLETED
    timed_out = result.status is AgentStatus.TIMEOUT
    error = None
    if not answered:
        error = result.error if timed_out else (result.error or result.status.value)
    return Reply(
        text=result.text if answered else None,
        backend=backend,
        model=result.model or model,
        usage=judge_usage(result.usage),
        duration_seconds=seconds,
        error=error,
        timed_out=timed_out,
    )


def judge_ask(
    engine: Callable[[], Engine],
    sandbox: Callable[[], AbstractContextManager[AttemptSandbox]],
    budget: float,
) -> Ask:
    """The ``ask`` of one check: ``engine`` resolves the judge engine (called on first use),
    ``sandbox`` gives a fresh sandbox per call, ``budget`` caps each call's seconds."""

    def ask(prompt: str, *, timeout: float | None = None) -> Reply:
        from caliper.plugin.attempt import PromptRequest
        from caliper.plugin.judge import Reply

        resolved = engine()
        backend = resolved.backend
        find_cli = getattr(engine, "cli_path", None)  # a LazyEngine finds it once per run
        cli_path = find_cli() if find_cli is not None else None
        model = judge_model_for(backend, resolved.model)
        seconds = budget if timeout is None else min(timeout, budget)
        started = time.monotonic()
        with sandbox() as box:
            try:
                result = backend.run_prompt(
                    PromptRequest(
                        prompt=prompt,
                        model=model,
                        sandbox=box,
                        timeout=seconds,
                        cli_path=cli_path,
                    )
                )
            except NotImplementedError as exc:
                took = time.monotonic() - started
                return Reply(None, backend.id, model, duration_seconds=took, error=str(exc))
        return _reply(result, backend.id, model, time.monotonic() - started)

    return ask
