"""The leak finders of the remote-MCP end-to-end check really find planted secrets."""

from __future__ import annotations

import os
import time
from pathlib import Path

from caliper.testing.remote_mcp import files_containing, new_secret, temp_files_containing


def test_new_secrets_are_distinct() -> None:
    assert new_secret() != new_secret()


def test_files_containing_finds_nested_files_but_not_links(tmp_path: Path) -> None:
    secret = new_secret()
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "leak.json").write_text(f'{{"h": "Bearer {secret}"}}')
    (tmp_path / "clean.txt").write_text("nothing here")
    (tmp_path / "link").symlink_to(tmp_path / "a" / "b" / "leak.json")
    assert files_containing(secret, [tmp_path, tmp_path / "missing"]) == [
        str(tmp_path / "a" / "b" / "leak.json")
    ]


def test_temp_files_containing_only_sees_recent_files(tmp_path: Path) -> None:
    secret = new_secret()
    old, new, skipped = tmp_path / "old", tmp_path / "new", tmp_path / "skipped"
    for path in (old, new, skipped):
        path.write_text(secret)
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    found = temp_files_containing(secret, time.time() - 60, skip=[skipped], root=tmp_path)
    assert found == [str(new)]
