"""Suite-wide settings for Caliper's own tests.

* ``CALIPER_TEST_PLUGINS=1``: the test-only plugins (the ``fake`` backend of ``tests/fakeagent``)
  are visible to this process and to every ``caliper`` it starts; users of a checkout never see
  them (see ``caliper.host.plugins``).
* ``caliper.testing.e2e_policy``: a test that starts a pinned agent CLI must be marked ``e2e``,
  and with ``CALIPER_REQUIRE_E2E=1`` (CI sets it) an ``e2e`` test that skips fails.
* ``SIGHUP`` and ``SIGINT`` at their defaults: a suite started under ``nohup`` (which ignores
  hang-ups) or as a background job of a script (which ignores ``SIGINT``) would pass the ignore
  on to every ``caliper`` it starts, and caliper rightly keeps an ignored signal ignored, so the
  tests that hang up on a run or press Ctrl-C and expect it to stop would wait in vain. The one
  test about ``nohup`` starts caliper under ``nohup`` itself.
"""

from __future__ import annotations

import os
import signal

from caliper.host.plugins import TEST_PLUGINS_ENV

os.environ[TEST_PLUGINS_ENV] = "1"
if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) == signal.SIG_IGN:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

pytest_plugins = ["caliper.testing.e2e_policy"]
