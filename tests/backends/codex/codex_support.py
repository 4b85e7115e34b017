"""Shared bits of the codex backend tests: the user config pointing at the scripted server."""

from __future__ import annotations

KEY_VARIABLE = "CALIPER_CODEX_TEST_KEY"
MODEL = "gpt-5.5"


def user_config(server_url: str, *, extra: str = "") -> str:
    """A user's config.toml with a custom provider pointing at ``server_url``."""
    return f"""model = "{MODEL}"
model_provider = "scripted"

[model_providers.scripted]
name = "Scripted test server"
base_url = "{server_url}/v1"
wire_api = "responses"
env_key = "{KEY_VARIABLE}"
request_max_retries = 0
stream_max_retries = 0
{extra}"""
