"""Registers the ``expect:`` judge (entry point ``caliper.judges: expect``)."""

from __future__ import annotations

from collections.abc import Callable

import caliper
from caliper.plugin.judge import Judge
from caliper_judge_llm.judge import ExpectJudge


@caliper.hookimpl
def register_judges(register: Callable[[Judge], None]) -> None:
    """Provide the LLM judge for the ``expect`` task key."""
    register(ExpectJudge())
