"""Fixtures for the ``expect:`` judge end-to-end tests.

``lab_for`` opens a :class:`judge_e2e_support.JudgeLab` for one judge backend, or skips saying
why (not in a loopback-only network namespace, CLI not provisioned, fake agent missing). Run
these tests with ``python -m caliper.testing.offline -- pytest tests/judge_llm``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from judge_e2e_support import JudgeLab, open_or_skip


@pytest.fixture
def lab_for(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., JudgeLab]]:
    """Factory: ``lab_for(backend_id, script) -> JudgeLab`` (server stopped at teardown)."""
    opened: list[JudgeLab] = []

    def open_lab(backend_id: str, script: Mapping[str, Any]) -> JudgeLab:
        lab = open_or_skip(tmp_path_factory, backend_id, script)
        opened.append(lab)
        return lab

    yield open_lab
    for lab in opened:
        lab.close()
