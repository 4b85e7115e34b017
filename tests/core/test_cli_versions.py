"""Reading CLI versions without touching the real home, and a bounded npm query."""

from __future__ import annotations

from caliper.cli_versions import npm_latest_version, parse_version, version_from_cli


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
