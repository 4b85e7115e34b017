"""Caliper's testing kit: a scripted model server, pytest fixtures and a backend conformance kit.

Opt in from a test suite with ``pytest_plugins = ["caliper.testing.fixtures"]``. The pieces:

* :mod:`caliper.testing.model_server` — ``ModelServer``: Anthropic Messages, OpenAI Responses
  and Chat Completions, scripted turns and rules, every request recorded.
* :mod:`caliper.testing.wire_registry` — the wire APIs the server speaks; a plugin registers
  another (a module providing :class:`caliper.testing.wire_protocol.WireProtocol`).
* :mod:`caliper.testing.offline` — run a command in a loopback-only network namespace.
* :mod:`caliper.testing.fixtures` — ``model_server``, ``fake_real_home``, ``agent_cli``,
  ``run_caliper``.
* :mod:`caliper.testing.conformance` — ``BackendConformance``, the standard backend tests.
* :mod:`caliper.testing.conformance_kit` — ``ConformanceKit`` and the helpers those tests use.

See ``docs/plugins/testing.md``.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "ModelServer": "caliper.testing.model_server",
    "RecordedRequest": "caliper.testing.model_server",
    "Script": "caliper.testing.script",
    "ScriptError": "caliper.testing.script",
    "ToolCall": "caliper.testing.script",
    "load_script": "caliper.testing.script",
    "parse_script": "caliper.testing.script",
}


def __getattr__(name: str) -> Any:
    """Import lazily, so ``python -m caliper.testing.model_server`` runs without warnings."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'caliper.testing' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_EXPORTS[name]), name)


__all__ = [
    "ModelServer",
    "RecordedRequest",
    "Script",
    "ScriptError",
    "ToolCall",
    "load_script",
    "parse_script",
]
