"""The pre-flight login check: can a ``gemini`` run authenticate at all?

Headless Gemini CLI needs an API key (``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``), Vertex AI
(``GOOGLE_GENAI_USE_VERTEXAI`` with a project) or a saved Google login (``oauth-personal`` in
the user's settings and ``~/.gemini/oauth_creds.json``). Without any, it stops at once with
"Please set an Auth method"; caliper says so before any attempt.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from caliper.plugin import SetupError
from caliper_backend_gemini.home import (
    API_KEY_VARIABLES,
    OAUTH_FILE,
    read_user_settings,
    user_auth_type,
    user_gemini_dir,
)


def check_login(real_home: Path, environ: Mapping[str, str]) -> None:
    """Raise :class:`SetupError` (exit 3) when ``gemini`` would have no credentials."""
    if any(environ.get(name) for name in API_KEY_VARIABLES):
        return
    if environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true"):
        return
    folder = user_gemini_dir(real_home, environ)
    auth = user_auth_type(read_user_settings(folder))
    if auth in ("oauth-personal", "compute-default-credentials") and (
        auth != "oauth-personal" or (folder / OAUTH_FILE).is_file()
    ):
        return
    if auth in ("vertex-ai", "gemini-api-key") and environ.get("GOOGLE_GENAI_USE_VERTEXAI"):
        return
    raise SetupError(
        "Gemini CLI has no credentials: neither GEMINI_API_KEY nor GOOGLE_API_KEY is set, and "
        f"there is no saved Google login ({folder / OAUTH_FILE}), so every attempt would fail.",
        hint="Set GEMINI_API_KEY (from https://aistudio.google.com/apikey), or run `gemini` "
        "once and choose Login with Google, then run caliper again.",
    )
