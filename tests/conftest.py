"""Suite-wide settings for Caliper's own tests.

* ``CALIPER_TEST_PLUGINS=1``: the test-only plugins (the ``fake`` backend of ``tests/fakeagent``)
  are visible to this process and to every ``caliper`` it starts; users of a checkout never see
  them (see ``caliper.plugins``).
"""

from __future__ import annotations

import os

from caliper.plugins import TEST_PLUGINS_ENV

os.environ[TEST_PLUGINS_ENV] = "1"
