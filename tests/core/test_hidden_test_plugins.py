"""The test-only ``fake`` backend never shows in what a user of a checkout sees.

It is installed in the workspace (the suite drives it), but its entry points are in the
``caliper.testing.*`` groups, read only with ``CALIPER_TEST_PLUGINS=1``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

CALIPER = Path(sys.executable).parent / "caliper"


def _caliper(tmp_path: Path, *args: str, test_plugins: bool) -> str:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        # `update-cli --check` asks npm for the newest versions: point it at a closed port on
        # loopback so it fails at once instead of waiting out its fetch timeout offline
        "npm_config_registry": "http://127.0.0.1:9/",
        "npm_config_fetch_retries": "0",
    }
    if test_plugins:
        env["CALIPER_TEST_PLUGINS"] = "1"
    done = subprocess.run(
        [str(CALIPER), *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("--version",),
        ("plugins", "--no-cli-check"),
        ("plugins", "--no-cli-check", "--json"),
        ("update-cli", "--check"),
    ],
    ids=lambda a: " ".join(a),
)
def test_the_test_only_backend_is_invisible_without_the_switch(tmp_path, args):
    shown = _caliper(tmp_path, *args, test_plugins=False)
    # (a word of its own: the temp folder in an npm error message may say anything)
    assert "caliper-fakeagent" not in shown, shown
    assert not re.search(r"(^|[\s\"|│])fake([\s\":|│]|$)", shown, re.M), shown
    assert "claude-code" in shown or "caliper-backend-claude" in shown, shown


def test_the_switch_makes_it_visible_to_the_suite(tmp_path):
    assert "caliper-fakeagent" in _caliper(tmp_path, "--version", test_plugins=True)
    data = json.loads(_caliper(tmp_path, "plugins", "--no-cli-check", "--json", test_plugins=True))
    assert "fake" in {b["id"] for b in data["backends"]}
    assert not data["failures"], data["failures"]
