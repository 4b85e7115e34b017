"""Suite-wide settings for Caliper's own tests.

* ``CALIPER_TEST_PLUGINS=1``: the test-only plugins (the ``fake`` backend of ``tests/fakeagent``)
  are visible to this process and to every ``caliper`` it starts; users of a checkout never see
  them (see ``caliper.plugins``).
* ``caliper.testing.e2e_policy``: a test that starts a pinned agent CLI must be marked ``e2e``,
  and with ``CALIPER_REQUIRE_E2E=1`` (CI sets it) an ``e2e`` test that skips fails.
"""

from __future__ import annotations

import os

from caliper.plugins import TEST_PLUGINS_ENV

os.environ[TEST_PLUGINS_ENV] = "1"

pytest_plugins = ["caliper.testing.e2e_policy"]
