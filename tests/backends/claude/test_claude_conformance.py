"""The standard backend conformance tests, run through ``caliper run`` with the real ``claude``."""

from __future__ import annotations

import pytest

from caliper_backend_claude.testing import ClaudeScripted

pytest_plugins = ["caliper.testing.fixtures"]

pytestmark = pytest.mark.e2e


class TestClaudeCodeConformance(ClaudeScripted):
    __test__ = True
