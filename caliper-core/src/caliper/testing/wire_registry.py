"""The registry of wire modules the scripted model server speaks.

The built-in wires (Anthropic Messages, OpenAI Responses, Chat Completions, Gemini) are registered
first; a plugin whose agent speaks another API registers a module providing
:class:`~caliper.testing.wire_protocol.WireProtocol`::

    from caliper.testing.wire_registry import register_wire
    from my_plugin.testing import wire_gemini

    register_wire(wire_gemini)

A ``POST`` goes to the first registered wire whose ``matches(path)`` is true, in registration
order (built-ins first). The registry is per process; registering the same module again is a
no-op.
"""

from __future__ import annotations

import threading

from caliper.testing import wire_anthropic, wire_chat, wire_gemini, wire_responses
from caliper.testing.wire_protocol import WireProtocol

_LOCK = threading.Lock()
_WIRES: dict[str, WireProtocol] = {}

_REQUIRED = (
    "name",
    "CALL_ID_PREFIX",
    "matches",
    "parse",
    "model_from",
    "stream_from",
    "reply_json",
    "reply_sse",
    "error_body",
)


class UnknownWireError(LookupError):
    """No registered wire module has the asked-for name."""


def register_wire(module: WireProtocol) -> WireProtocol:
    """Add ``module`` to the registry and return it.

    Raises TypeError when the module lacks part of :class:`WireProtocol` (naming what is
    missing) and ValueError when a different module already has its ``name``.
    """
    missing = [attr for attr in _REQUIRED if not hasattr(module, attr)]
    if missing:
        raise TypeError(f"wire module {module!r} lacks {', '.join(missing)} (see WireProtocol)")
    name = module.name
    if not isinstance(name, str) or not name:
        raise TypeError(f"wire module {module!r}: 'name' must be a non-empty string")
    with _LOCK:
        known = _WIRES.get(name)
        if known is not None and known is not module:
            raise ValueError(f"a different wire module is already registered as {name!r}")
        _WIRES[name] = module
    return module


def wire_names() -> tuple[str, ...]:
    """The registered wire names, in registration order."""
    with _LOCK:
        return tuple(_WIRES)


def wire_named(name: str) -> WireProtocol:
    """The wire module registered as ``name``; UnknownWireError names the registered ones."""
    with _LOCK:
        found = _WIRES.get(name)
    if found is None:
        known = ", ".join(wire_names())
        raise UnknownWireError(
            f"no wire module named {name!r} is registered (registered: {known}); "
            "register yours with caliper.testing.wire_registry.register_wire"
        )
    return found


def wire_for_path(path: str) -> WireProtocol | None:
    """The first registered wire whose ``matches(path)`` is true, or None."""
    with _LOCK:
        wires = list(_WIRES.values())
    return next((wire for wire in wires if wire.matches(path)), None)


for _builtin in (wire_anthropic, wire_responses, wire_chat, wire_gemini):
    register_wire(_builtin)  # modules satisfy WireProtocol structurally

__all__ = [
    "UnknownWireError",
    "register_wire",
    "wire_for_path",
    "wire_named",
    "wire_names",
]
