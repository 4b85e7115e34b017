"""A corrupt stevedore entry-point cache never breaks a command (issue 11 item 11), through
the real ``caliper`` script."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CALIPER = Path(sys.executable).parent / "caliper"
GARBAGE = {
    "binary": b"\xba\xad\xf0\x0d" * 64,
    "not-json": b"{{{ this is not json",
    "wrong-shape": b"[1, 2, 3]",
    "bad-entry": b'{"groups": {"caliper.judges": [["x"]], "caliper.backends": [["y"]]}}',
    "empty-groups": b'{"groups": {}, "path_values": []}',
}


def _plant_cache(env: dict[str, str], content: bytes) -> list[Path]:
    """Write ``content`` where stevedore would read its cache for the ``caliper`` script's
    ``sys.path`` (as the script sees it: its own folder first).

    The file is planted here rather than written by stevedore: stevedore writes no cache when
    ``sys.executable`` is under ``/tmp`` (a clone there), but it reads one wherever it is.
    """
    code = (
        "import os, sys; sys.path[0] = sys.argv[1]\n"
        "from stevedore import _cache\n"
        "digest, _ = _cache._hash_settings_for_path(tuple(sys.path))\n"
        "print(os.path.join(_cache._get_cache_dir(), digest))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(CALIPER.parent)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    file = Path(done.stdout.strip())
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(content)
    return [file]


@pytest.mark.parametrize("cache_variable", ["HOME", "XDG_CACHE_HOME"])
@pytest.mark.parametrize("kind", sorted(GARBAGE))
def test_commands_work_with_a_corrupt_entry_point_cache(tmp_path, kind, cache_variable):
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "LANG": "C.UTF-8"}
    if cache_variable == "XDG_CACHE_HOME":
        env["XDG_CACHE_HOME"] = str(tmp_path / "xdg-cache")
    planted = _plant_cache(env, GARBAGE[kind])
    spec = tmp_path / "s.eval.yaml"
    spec.write_text("tasks:\n  - name: t\n    prompt: hi\n    assert: assert True\n")

    listed = subprocess.run(
        [str(CALIPER), "plugins"], env=env, capture_output=True, text=True, timeout=60
    )
    assert listed.returncode == 0, listed.stderr
    assert "assert" in listed.stdout and "claude-code" in listed.stdout
    checked = subprocess.run(
        [str(CALIPER), "validate", str(spec)], env=env, capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "valid" in checked.stdout
    assert all(p.read_bytes() == GARBAGE[kind] for p in planted if p.exists())
