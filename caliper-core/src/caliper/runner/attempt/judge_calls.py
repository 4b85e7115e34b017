"""How a judge's ``context.ask`` reaches the judge engine.

The core owns the one path from a judge's question to a model: decide the judge engine and its
model (:func:`decide_judge_engine` and :func:`judge_model_for`, the only place the rule and
``CALIPER_JUDGE_MODEL`` are read), resolve it lazily (only when a judge asks), run the
backend's ``run_prompt`` in a fresh sandbox removed afterwards, and hand the judge a typed
:class:`~caliper.plugin.judge.Reply`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from caliper.plugin.attempt import AgentStatus, PromptRequest

if TYPE_CHECKING:
    from caliper.host.engine import Engine
    from caliper.host.plugins import PluginHost
    from caliper.plugin.attempt import AttemptSandbox, PromptResult
    from caliper.plugin.backend import Backend
    from caliper.plugin.judge import Ask, Reply
    from caliper.runner.run.options import RunOptions
    from caliper.runner.run.prepare import PreparedRun

JUDGE_MODEL_VARIABLE = "CALIPER_JUDGE_MODEL"
"""The model judge calls use when ``--judge-model`` names none (before ``--model``'s model)."""


def judge_model_for(
    backend: Backend, named: str | None = None, *, follows: str | None = None
) -> str | None:
    """The model judge calls on ``backend`` ask for; ``None`` leaves it to the CLI's default.

    The whole rule, the first one set wins:

    1. ``named``: the model ``--judge-model <backend>:<model>`` names;
    2. the ``CALIPER_JUDGE_MODEL`` environment variable;
    3. ``follows``: the model ``--model`` names, when the judges follow the run's engine
       (no ``--judge-model``);
    4. the backend's :attr:`~caliper.plugin.backend.Backend.default_judge_model`;
    5. ``None``: the CLI's own default model.

    Blank values count as unset. Applying it again to its own answer (as ``named``) gives the
    same answer, so an engine decided ahead passes through a judge call unchanged.
    """
    for model in (named, os.environ.get(JUDGE_MODEL_VARIABLE), follows):
        if model and model.strip():
            return model.strip()
    return backend.default_judge_model


def decide_judge_engine(host: PluginHost, judge_flag: str | None, run_engine: Engine) -> Engine:
    """The engine LLM judges use, its model decided by :func:`judge_model_for`.

    ``judge_flag`` is ``--judge-model`` (resolved against ``host``'s backends when given and
    not blank); without it the judges follow ``run_engine`` (the run's ``--model``): the same
    backend, so a user who only has one agent CLI can grade with it, and its model unless
    ``CALIPER_JUDGE_MODEL`` names another.
    """
    from caliper.host.engine import Engine

    if judge_flag is not None and judge_flag.strip():
        return judge_engine_named(host, judge_flag)
    backend = run_engine.backend
    return Engine(backend, judge_model_for(backend, follows=run_engine.model), None)


def judge_engine_named(host: PluginHost, judge_flag: str | None) -> Engine:
    """The judge engine ``judge_flag`` names (a ``--judge-model`` value, or what a saved run
    recorded), resolved against ``host``'s backends, its model decided by
    :func:`judge_model_for` (so ``CALIPER_JUDGE_MODEL`` and the backend's default judge model
    apply the way they do in a run)."""
    from caliper.host.engine import Engine, resolve_engine

    asked = resolve_engine(host, judge_flag, flag="--judge-model")
    return Engine(asked.backend, judge_model_for(asked.backend, asked.model), asked.requested)


def _reply(result: PromptResult, backend: str, model: str | None, seconds: float) -> Reply:
    from caliper.plugin.verdict import Reply

    answered = result.status is AgentStatus.COMPLETED
    timed_out = result.status is AgentStatus.TIMEOUT
    error = None
    if not answered:
        error = result.error if timed_out else (result.error or result.status.value)
    return Reply(
        text=result.text if answered else None,
        backend=backend,
        model=result.model or model,
        usage=result.usage,
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
                from caliper.plugin.verdict import Reply

                took = time.monotonic() - started
                return Reply(None, backend.id, model, duration_seconds=took, error=str(exc))
        return _reply(result, backend.id, model, time.monotonic() - started)

    return ask


def judge_engine_for(host: PluginHost, options: RunOptions, prepared: PreparedRun) -> Engine:
    """The engine LLM judges use: ``--judge-model`` when given, else the run's own engine.

    :func:`caliper.runner.attempt.judge_calls.decide_judge_engine` decides it (``--judge-model``,
    then ``CALIPER_JUDGE_MODEL``, then the model ``--model`` named, then the backend's judge
    default). In a matrix each engine's judges follow that engine; ``--judge-model`` applies
    to every engine.
    """
    return decide_judge_engine(host, options.judge_model, prepared.engine)
