"""Reading CLI versions without touching the real home, and a bounded npm query."""

from __future__ import annotations

import json
import os
import tempfile
import time

import pytest

from caliper.plugin.cli_versions import (
    npm_latest_version,
    parse_version,
    version_from_cli,
    version_in_background,
)


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """Every test keeps its version cache in its own folder, never in the real one."""
    monkeypatch.setenv("CALIPER_CACHE_DIR", str(tmp_path / "own-cache"))


def test_parse_version_finds_the_first_semver():
    assert parse_version("codex-cli 0.171.0") == "0.171.0"
    assert parse_version("2.1.332 (Claude Code)") == "2.1.332"
    assert parse_version("v1.6.0-beta.2 build") == "1.6.0-beta.2"
    assert parse_version("no version here") is None


def test_version_runs_in_a_throw_away_home_with_extra_env(tmp_path):
    seen = tmp_path / "seen"
    cli = tmp_path / "tool"
    cli.write_text(f'#!/bin/sh\necho "$HOME $TOOL_DIR" > {seen}\necho "tool 3.4.5"\n')
    cli.chmod(0o755)

    def extra(home):
        (home / "cfg").mkdir()
        return {"TOOL_DIR": str(home / "cfg")}

    assert version_from_cli(cli, extra_env=extra) == "3.4.5"
    home, tool_dir = seen.read_text().split()
    assert tool_dir == f"{home}/cfg" and "caliper-cli-version-" in home


def test_version_of_a_failing_or_silent_cli_is_none(tmp_path):
    cli = tmp_path / "tool"
    cli.write_text("#!/bin/sh\nexit 2\n")
    cli.chmod(0o755)
    assert version_from_cli(cli) is None


def test_npm_missing_says_why(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    version, note = npm_latest_version("@openai/codex")
    assert version is None and "npm was not found" in note


# -- the per-binary cache and the background probe (issue 20) ------------------------------
def counting_cli(tmp_path, version="tool 3.4.5"):
    """A CLI that prints ``version`` and counts its starts in ``starts``."""
    starts = tmp_path / "starts"
    cli = tmp_path / "tool"
    cli.write_text(f'#!/bin/sh\necho x >> {starts}\necho "{version}"\n')
    cli.chmod(0o755)
    return cli, starts


def count(starts) -> int:
    return len(starts.read_text().split()) if starts.exists() else 0


def test_a_version_is_probed_once_per_binary(tmp_path, monkeypatch):
    monkeypatch.setenv("CALIPER_CACHE_DIR", str(tmp_path / "cache"))
    cli, starts = counting_cli(tmp_path)
    assert [version_from_cli(cli) for _ in range(3)] == ["3.4.5"] * 3
    assert count(starts) == 1
    assert version_from_cli(cli, cache=False) == "3.4.5" and count(starts) == 2
    # a new install (other size, other mtime) is probed again
    cli.write_text(cli.read_text().replace("3.4.5", "3.4.6-beta"))
    os.utime(cli, ns=(1, 1))
    assert version_from_cli(cli) == "3.4.6-beta" and count(starts) == 3
    assert version_from_cli(cli) == "3.4.6-beta" and count(starts) == 3


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"k": 3}', ""])
def test_a_corrupt_cache_is_ignored_and_rewritten(tmp_path, monkeypatch, content):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "cli-versions.json").write_text(content)
    monkeypatch.setenv("CALIPER_CACHE_DIR", str(cache))
    cli, starts = counting_cli(tmp_path)
    assert version_from_cli(cli) == "3.4.5"
    assert version_from_cli(cli) == "3.4.5" and count(starts) == 1
    assert list(json.loads((cache / "cli-versions.json").read_text()).values()) == ["3.4.5"]


def test_an_unwritable_cache_only_costs_a_probe(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("CALIPER_CACHE_DIR", str(blocker / "cache"))  # cannot be created
    cli, starts = counting_cli(tmp_path)
    assert version_from_cli(cli) == "3.4.5" and version_from_cli(cli) == "3.4.5"
    assert count(starts) == 2


def test_a_failed_probe_is_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("CALIPER_CACHE_DIR", str(tmp_path / "cache"))
    cli, starts = counting_cli(tmp_path, version="no version")
    assert version_from_cli(cli) is None and version_from_cli(cli) is None
    assert count(starts) == 2


def test_the_background_probe_does_not_hold_up_its_caller(tmp_path, monkeypatch):
    monkeypatch.setenv("CALIPER_CACHE_DIR", str(tmp_path / "cache"))
    cli = tmp_path / "slow"
    cli.write_text('#!/bin/sh\nsleep 1\necho "slow 1.2.3"\n')
    cli.chmod(0o755)
    started = time.monotonic()
    answer = version_in_background(lambda: version_from_cli(cli))
    assert time.monotonic() - started < 0.5
    assert answer() == "1.2.3" and time.monotonic() - started >= 1.0
    assert version_in_background(lambda: 1 / 0)() is None  # a crashing probe is no version


def test_the_default_cache_is_never_in_the_home(tmp_path, monkeypatch):
    """A run must leave the user's home as it found it (the conformance kit checks the real
    home): without CALIPER_CACHE_DIR the cache is a private folder in the temp folder."""
    home, temp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    temp.mkdir()
    monkeypatch.delenv("CALIPER_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    cli, starts = counting_cli(tmp_path)
    assert [version_from_cli(cli) for _ in range(2)] == ["3.4.5"] * 2
    assert count(starts) == 1
    assert list(home.iterdir()) == []
    folder = temp / f"caliper-{os.getuid()}"
    assert (folder / "cli-versions.json").is_file()
    assert folder.stat().st_mode & 0o777 == 0o700


def test_a_shared_cache_folder_is_not_trusted(tmp_path, monkeypatch):
    temp = tmp_path / "tmp"
    folder = temp / f"caliper-{os.getuid()}"
    folder.mkdir(parents=True)
    folder.chmod(0o777)  # others could plant versions in it
    monkeypatch.delenv("CALIPER_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    cli, starts = counting_cli(tmp_path)
    assert [version_from_cli(cli) for _ in range(2)] == ["3.4.5"] * 2
    assert count(starts) == 2  # probed each time, nothing cached
    assert not (folder / "cli-versions.json").exists()
