"""The standard backend conformance suite, run through ``caliper run`` on the pinned Hermes."""

from __future__ import annotations

import pytest

from caliper_backend_hermes.testing import HermesScripted

pytest_plugins = ["caliper.testing.fixtures"]

pytestmark = pytest.mark.e2e


class TestHermesConformance(HermesScripted):
    """Hermes 0.19.0 speaking Chat Completions to the scripted model server."""

    __test__ = True
