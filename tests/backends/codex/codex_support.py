"""Shared bits of the codex backend tests: the user config pointing at the scripted server
(kept once, in the backend's own package: ``caliper_backend_codex.testing``)."""

from __future__ import annotations

from caliper_backend_codex.testing import KEY_VARIABLE, MODEL, user_config

__all__ = ["KEY_VARIABLE", "MODEL", "user_config"]
