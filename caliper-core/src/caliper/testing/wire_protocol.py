"""The interface of a wire module: one model API the scripted model server speaks.

A wire module is a plain Python module (or any object) with the attributes and functions of
:class:`WireProtocol`. The server finds the wire of a ``POST`` by its path
(:func:`~caliper.testing.wire_registry.wire_for_path`), reads the request with the wire's
``parse``/``model_from``/``stream_from``, picks the scripted turn on the wire-neutral
:class:`~caliper.testing.conversation.Conversation`, and answers with the wire's
``reply_json``, ``reply_sse`` or ``error_body``.

The built-in wires are :mod:`caliper.testing.wire_anthropic`, :mod:`caliper.testing.wire_responses`
and :mod:`caliper.testing.wire_chat`; a plugin adds its own with
:func:`~caliper.testing.wire_registry.register_wire`.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from caliper.testing.conversation import Conversation
from caliper.testing.reply import Reply
from caliper.testing.script import ScriptedError


@runtime_checkable
class WireProtocol(Protocol):
    """What a wire module provides (module-level names; a module satisfies it structurally).

    ``name`` is the wire's id: the ``api`` of the requests it answers and the value a
    backend's conformance suite gives as ``wire_api``. ``CALL_ID_PREFIX`` starts the ids of
    the tool calls the server makes up (``toolu_``, ``call_``, ...).
    """

    name: str
    CALL_ID_PREFIX: str

    def matches(self, path: str) -> bool:
        """Whether a ``POST`` to ``path`` (query string included) is a request on this wire."""
        ...

    def parse(self, body: dict[str, Any]) -> Conversation:
        """The conversation a request body carries (its ``api`` is ``name``)."""
        ...

    def model_from(self, path: str, body: dict[str, Any]) -> str | None:
        """The model a request asks for (from the body, or the URL path), or None."""
        ...

    def stream_from(self, path: str, body: dict[str, Any]) -> bool:
        """Whether a request asks for a streamed (SSE) answer."""
        ...

    def reply_json(self, reply: Reply) -> dict[str, Any]:
        """The non-streaming response for ``reply``."""
        ...

    def reply_sse(self, reply: Reply) -> bytes:
        """The streaming response for ``reply`` as server-sent-event bytes."""
        ...

    def error_body(self, error: ScriptedError) -> dict[str, Any]:
        """The API's error object for a scripted error (sent with ``error.status``)."""
        ...


def bare_path(path: str) -> str:
    """``path`` without its query string and trailing slashes (what ``matches`` usually tests)."""
    return path.split("?", 1)[0].rstrip("/")


def body_model(body: dict[str, Any]) -> str | None:
    """The ``model`` field of a request body when it is a string (the usual ``model_from``)."""
    model = body.get("model")
    return model if isinstance(model, str) else None


def body_stream(body: dict[str, Any]) -> bool:
    """The ``stream`` field of a request body as a flag (the usual ``stream_from``)."""
    return bool(body.get("stream"))


__all__ = ["WireProtocol", "bare_path", "body_model", "body_stream"]
