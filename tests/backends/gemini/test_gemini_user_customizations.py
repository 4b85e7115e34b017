"""``--user-customizations`` for Gemini CLI (issue 32): the user's ``~/.gemini`` setup (fake
user home, never the real one) is merged under caliper's settings, and on the real pinned
``gemini`` (scripted model server) the user's memory file and skill reach the model only when
asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
import test_gemini_conformance as conformance

from caliper.plugin.sandbox import make_sandbox, remove_sandbox
from caliper.testing.conformance import ConformanceKit, ok_run
from caliper.testing.harness import FakeRealHome
from caliper_backend_gemini import backend, home, user_setup

pytest_plugins = ["caliper.testing.fixtures"]

MEMORY_MARK = "PERSONAL-GEMINI-MEMORY"
SKILL_MARK = "PERSONAL-GEMINI-SKILL"
HISTORY_MARK = "PERSONAL-GEMINI-HISTORY"
SECRET = "editor-s3cr3t-7731"


def _user_gemini(real_home: Path) -> Path:
    """A user's ``~/.gemini``: settings that fight caliper's, a memory file, skills in both
    user folders, an extension with a secret ``.env``, a saved chat, an MCP token file."""
    folder = real_home / ".gemini"
    (folder / "tmp" / "project" / "chats").mkdir(parents=True)
    (folder / "tmp" / "project" / "chats" / "session.json").write_text(HISTORY_MARK)
    (folder / "mcp-oauth-tokens.json").write_text('{"token": "t"}')
    (folder / "GEMINI.md").write_text(f"{MEMORY_MARK}: answer briefly.\n")
    skill = real_home / ".agents" / "skills" / "personal-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: personal-notes\ndescription: {SKILL_MARK} takes notes.\n---\nNotes.\n"
    )
    extension = folder / "extensions" / "my-ext"
    extension.mkdir(parents=True)
    (extension / "gemini-extension.json").write_text('{"name": "my-ext", "version": "1.0.0"}')
    (extension / ".env").write_text("EXT_TOKEN=ext-secret\n")
    settings: dict[str, Any] = {
        "general": {"maxAttempts": 7, "preferredEditor": "$PERSONAL_EDITOR"},
        "telemetry": {"enabled": True},
        "privacy": {"usageStatisticsEnabled": True},
        "security": {"auth": {"selectedType": "oauth-personal"}},
        "skills": {"disabled": ["someone-elses"]},
        "mcpServers": {
            "personal": {"command": "true"},
            "shared": {"command": "true", "args": ["user"]},
        },
    }
    (folder / "settings.json").write_text(json.dumps(settings))
    return folder


def test_user_settings_merge_under_caliper_and_references_stay_references(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Caliper's keys win, the user's others stay, ``$VAR`` is written as it is (its value goes
    by environment only), the spec's MCP server wins a name, history and tokens stay out."""
    real_home = tmp_path / "real-home"
    _user_gemini(real_home)
    monkeypatch.setenv("CALIPER_TMPDIR", str(tmp_path))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    monkeypatch.setenv("PERSONAL_EDITOR", SECRET)
    sandbox = attrs.evolve(make_sandbox(spec_dir=tmp_path), real_home=real_home)
    try:
        seeded = home.seed(sandbox, environ={"GEMINI_API_KEY": "k", "HOME": str(real_home)})
        spec_servers = {"shared": {"command": "true", "args": ["spec"]}}
        loaded = backend._load_user_setup(sandbox, seeded, spec_servers, ["under-test"])
        folder = home.gemini_dir(sandbox)
        written = json.loads((folder / "settings.json").read_text())
        assert written["general"]["maxAttempts"] == 1
        assert written["general"]["preferredEditor"] == "$PERSONAL_EDITOR"
        assert written["telemetry"]["enabled"] is False
        assert written["privacy"]["usageStatisticsEnabled"] is False
        assert written["security"]["auth"]["selectedType"] == "gemini-api-key"
        assert written["skills"]["disabled"] == [*home.BUILT_IN_SKILLS, "someone-elses"]
        assert written["mcpServers"] == {
            "personal": {"command": "true"},
            "shared": {"command": "true", "args": ["spec"]},
        }
        assert loaded.env == {"PERSONAL_EDITOR": SECRET}
        files = [p for p in sandbox.root.rglob("*") if p.is_file()]
        assert not [p for p in files if SECRET.encode() in p.read_bytes()]
        assert (folder / "GEMINI.md").read_text().startswith(MEMORY_MARK)
        assert (folder / "skills" / "personal-notes" / "SKILL.md").is_file()
        env_copy = folder / "extensions" / "my-ext" / ".env"
        assert env_copy.read_text() == "EXT_TOKEN=ext-secret\n"
        assert env_copy.stat().st_mode & 0o777 == 0o600
        assert not (folder / "tmp" / "project").exists()
        assert not (folder / "mcp-oauth-tokens.json").exists()
        setup = loaded.setup
        assert setup.rules == ("~/.gemini/GEMINI.md",)
        assert setup.skills == ("personal-notes",)
        assert setup.mcp == ("personal",)
        assert "extensions: my-ext" in setup.settings
        assert any("shared: the spec's server" in n for n in setup.not_loaded)
    finally:
        remove_sandbox(sandbox)


def test_merge_under_lets_enforced_win_at_every_depth() -> None:
    """Nested sections merge key by key; a scalar of caliper's replaces a section of the
    user's; the user's keys caliper does not set stay."""
    user = {"a": {"b": 1, "c": 2}, "d": {"e": 3}, "f": 4}
    enforced = {"a": {"b": 9}, "d": 5}
    assert user_setup.merge_under(user, enforced) == {"a": {"b": 9, "c": 2}, "d": 5, "f": 4}


def test_the_users_settings_never_switch_off_skills_or_the_skill_under_test() -> None:
    """``skills.enabled: false`` or a declared skill in the user's ``skills.disabled`` would
    hide the skill under test from the model: caliper's ``enabled`` wins and the declared
    names are dropped from the user's list (their other names stay)."""
    user = {"skills": {"enabled": False, "disabled": ["under-test", "mine-off"]}}
    merged = user_setup.merge_under(user, home.base_settings(None), ["under-test"])
    assert merged["skills"]["enabled"] is True
    assert merged["skills"]["disabled"] == [*home.BUILT_IN_SKILLS, "mine-off"]


def test_memory_file_names_follow_context_file_name() -> None:
    """``context.fileName`` as a string or a list; a name with a path part is ignored."""
    assert user_setup.memory_file_names({}) == ["GEMINI.md"]
    assert user_setup.memory_file_names({"context": {"fileName": "AGENTS.md"}}) == ["AGENTS.md"]
    names = {"context": {"fileName": ["A.md", "../B.md", "C.md"]}}
    assert user_setup.memory_file_names(names) == ["A.md", "C.md"]


def test_a_stray_dollar_in_the_users_settings_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``$`` that is no ``$VAR`` reference stops the attempt with a setup error."""
    real_home = tmp_path / "real-home"
    (real_home / ".gemini").mkdir(parents=True)
    (real_home / ".gemini" / "settings.json").write_text('{"ui": {"theme": "costs $5"}}')
    monkeypatch.setenv("CALIPER_TMPDIR", str(tmp_path))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    sandbox = attrs.evolve(make_sandbox(spec_dir=tmp_path), real_home=real_home)
    try:
        seeded = home.seed(sandbox, environ={"GEMINI_API_KEY": "k"})
        with pytest.raises(home.SetupError, match="would expand"):
            backend._load_user_setup(sandbox, seeded, {}, [])
    finally:
        remove_sandbox(sandbox)


@pytest.fixture
def kit(tmp_path: Path, agent_cli: Any) -> Any:
    suite = conformance.TestGeminiConformance()
    suite.wire()
    made = ConformanceKit(
        suite, tmp_path, FakeRealHome(tmp_path / "real-home"), agent_cli("gemini")
    )
    yield made
    made.close()


@pytest.mark.e2e
def test_gemini_loads_the_user_setup_only_on_request(kit: ConformanceKit) -> None:
    """Without the flag nothing of the user's reaches the model; with it their GEMINI.md and
    skill do, their chat history does not, and the run names what it loaded."""
    folder = _user_gemini(kit.home.path)
    settings = json.loads((folder / "settings.json").read_text())
    del settings["mcpServers"], settings["security"]  # no servers to start; the key's auth
    (folder / "settings.json").write_text(json.dumps(settings))
    spec = kit.spec([{"name": "answers", "prompt": "Say ok.", "assert": "assert True"}])
    sent = []
    runs = []
    for flags in ((), ("--user-customizations",)):
        server = kit.server(kit.script([{"text": "ok"}]))
        runs.append(kit.run(spec, server, *flags, env={"PERSONAL_EDITOR": SECRET}))
        sent.append(server.all_sent_text())
    (plain, custom), (plain_sent, custom_sent) = runs, sent
    ok_run(plain)
    for mark in (MEMORY_MARK, SKILL_MARK, HISTORY_MARK):
        assert mark not in plain_sent, mark
    assert plain.results["meta"]["user_customizations"] is False
    ok_run(custom)
    assert MEMORY_MARK in custom_sent and SKILL_MARK in custom_sent, custom.describe()
    assert HISTORY_MARK not in custom_sent and SECRET not in custom_sent
    setup = custom.results["meta"]["user_setup"]
    assert setup["rules"] == ["~/.gemini/GEMINI.md"]
    assert setup["skills"] == ["personal-notes"]
    assert not plain.home_changes and not custom.home_changes
