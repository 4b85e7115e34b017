"""The attempt's config.toml: the user's config minus what is personal, plus caliper's knobs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from caliper.errors import SetupError
from caliper_backend_codex import config as codex_config
from caliper_backend_codex.home import forwarded_env

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

USER_CONFIG = """
model = "gpt-5.5"
model_provider = "corp"
notify = ["/usr/local/bin/notify-me"]
model_reasoning_effort = "high"

[model_providers.corp]
name = "Corporate gateway"
base_url = "http://127.0.0.1:9999/v1"
wire_api = "responses"
env_key = "CORP_KEY"
env_http_headers = { "X-Team" = "CORP_TEAM" }
request_max_retries = 9
stream_max_retries = 1

[model_providers.other]
name = "Other"
base_url = "http://127.0.0.1:9998/v1"

[mcp_servers.personal]
command = "my-secret-server"
env = { TOKEN = "personal-secret" }

[[skills.config]]
path = "/home/me/.codex/skills/private/SKILL.md"
enabled = true

[features]
unified_exec = true
plugins = true

[analytics]
enabled = true

[otel]
exporter = { otlp-http = { endpoint = "https://telemetry.example" } }

[profiles.fast]
model = "gpt-5.5-mini"
[profiles.fast.mcp_servers.other]
command = "x"

[projects."/home/me/repo"]
trust_level = "trusted"
"""


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    home = tmp_path / "real" / ".codex"
    home.mkdir(parents=True)
    (home / "config.toml").write_text(USER_CONFIG)
    return home


def written(user_home: Path, tmp_path: Path, **kwargs) -> dict:
    user = codex_config.load_user_config(user_home)
    config = codex_config.attempt_config(user, **kwargs)
    path = codex_config.write_config(config, tmp_path / "attempt" / ".codex")
    assert path.stat().st_mode & 0o777 == 0o600
    return tomllib.loads(path.read_text())


def test_custom_provider_survives_and_retries_are_bounded(user_home: Path, tmp_path: Path):
    config = written(user_home, tmp_path)
    assert config["model"] == "gpt-5.5"
    assert config["model_provider"] == "corp"
    assert config["model_reasoning_effort"] == "high"
    corp = config["model_providers"]["corp"]
    assert corp["base_url"] == "http://127.0.0.1:9999/v1"
    assert corp["env_key"] == "CORP_KEY"
    assert corp["request_max_retries"] == codex_config.MAX_RETRIES
    assert corp["stream_max_retries"] == 1
    other = config["model_providers"]["other"]
    assert other["request_max_retries"] == other["stream_max_retries"] == codex_config.MAX_RETRIES


def test_personal_servers_skills_and_hooks_are_dropped(user_home: Path, tmp_path: Path):
    config = written(user_home, tmp_path)
    assert "mcp_servers" not in config
    assert "notify" not in config
    assert "projects" not in config
    assert "mcp_servers" not in config["profiles"]["fast"]
    assert config["profiles"]["fast"]["model"] == "gpt-5.5-mini"
    assert config["skills"] == {"bundled": {"enabled": False}}
    assert "personal-secret" not in (tmp_path / "attempt" / ".codex" / "config.toml").read_text()


def test_network_knobs_are_forced_off(user_home: Path, tmp_path: Path):
    config = written(user_home, tmp_path)
    assert config["analytics"] == {"enabled": False}
    assert config["features"] == {"unified_exec": True, "plugins": False, "apps": False}
    assert config["otel"] == codex_config.OTEL_OFF


def test_declared_mcp_servers_replace_personal_ones(user_home: Path, tmp_path: Path):
    tables = {"demo": {"command": "python3", "args": ["-m", "echo"], "required": True}}
    config = written(user_home, tmp_path, mcp_servers=tables)
    assert config["mcp_servers"] == tables


def test_judge_config_hides_skill_instructions(user_home: Path, tmp_path: Path):
    config = written(user_home, tmp_path, skill_instructions=False)
    assert config["skills"]["include_instructions"] is False


def test_no_user_config_gives_only_our_knobs(tmp_path: Path):
    config = codex_config.attempt_config(codex_config.load_user_config(tmp_path / "none"))
    assert set(config) == {"analytics", "features", "otel", "skills"}


def test_invalid_user_config_is_a_setup_error(tmp_path: Path):
    (tmp_path / "config.toml").write_text("model = [unclosed\n")
    with pytest.raises(SetupError) as caught:
        codex_config.load_user_config(tmp_path)
    assert str(tmp_path / "config.toml") in caught.value.message
    assert "not valid TOML" in caught.value.message


def test_codex_home_comes_from_the_environment_first(tmp_path: Path):
    assert codex_config.user_codex_home(tmp_path, {}) == tmp_path / ".codex"
    assert codex_config.user_codex_home(tmp_path, {"CODEX_HOME": "/x/y"}) == Path("/x/y")


def test_forwarded_environment(user_home: Path):
    user = codex_config.load_user_config(user_home)
    environ = {
        "CORP_KEY": "k",
        "CORP_TEAM": "t",
        "OPENAI_API_KEY": "o",
        "HTTPS_PROXY": "p",
        "AWS_SECRET_ACCESS_KEY": "aws",
        "GITHUB_TOKEN": "gh",
        "ANTHROPIC_API_KEY": "a",
    }
    assert forwarded_env(user, environ) == {
        "CORP_KEY": "k",
        "CORP_TEAM": "t",
        "OPENAI_API_KEY": "o",
        "HTTPS_PROXY": "p",
    }
    aws = {"model_providers": {"bedrock": {"aws": {"profile": "x"}}}}
    assert forwarded_env(aws, environ)["AWS_SECRET_ACCESS_KEY"] == "aws"


def test_openai_login_only_for_providers_that_use_it() -> None:
    assert codex_config.needs_openai_login({})
    assert codex_config.needs_openai_login({"model_provider": "openai"})
    custom = {"model_provider": "corp", "model_providers": {"corp": {"env_key": "K"}}}
    assert not codex_config.needs_openai_login(custom)
    custom["model_providers"]["corp"]["requires_openai_auth"] = True
    assert codex_config.needs_openai_login(custom)
    profiled = {
        "profile": "work",
        "profiles": {"work": {"model_provider": "corp"}},
        "model_providers": {"corp": {}},
    }
    assert not codex_config.needs_openai_login(profiled)
    assert codex_config.active_provider(profiled) == "corp"
