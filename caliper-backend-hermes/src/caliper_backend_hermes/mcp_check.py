"""Whether every spec MCP server actually connected, read from Hermes' own ``agent.log``.

Hermes connects MCP servers in a background thread and goes on without any server it cannot
reach, so a dead server (or one that refuses the token) would leave an attempt running, and
scored, without the server's tools. Caliper makes Hermes wait for that discovery before the
first model call (``mcp_discovery_timeout`` in the attempt's config, see :mod:`.home`), then
reads the lines Hermes' MCP client logs for each server under ``$HERMES_HOME/logs``:

* ``MCP server 'NAME' (HTTP|stdio): registered N tool(s): …`` — connected;
* ``Failed to connect to MCP server 'NAME'[ (command=…)]: REASON`` — gave up;
* ``Skipping suspicious MCP server 'NAME': REASON`` — refused by Hermes' config check.

A server with no "registered" line is unusable: the attempt is a setup error naming it.
Nothing here reads the model's answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import attrs

from caliper.plugin.mcp_unusable import unusable_mcp_message

AGENT_LOG = ("logs", "agent.log")
_REGISTERED = re.compile(r"MCP server '(?P<name>.+?)' \((?:HTTP|stdio)\): registered \d+ tool")
_FAILED = re.compile(
    r"Failed to connect to MCP server '(?P<name>.+?)'(?: \(command=.*?\))?: (?P<why>.*)$"
)
_SKIPPED = re.compile(r"Skipping suspicious MCP server '(?P<name>.+?)': (?P<why>.*)$")
_LAST_TRY = re.compile(
    r"MCP server '(?P<name>.+?)' (?:initial connection failed \(attempt \d+/\d+\), "
    r"retrying in \d+s|failed initial OAuth authentication, not retrying automatically): "
    r"(?P<why>.*)$"
)
MAX_REASON = 300


@attrs.frozen
class UnusableServer:
    """A spec MCP server Hermes did not connect, and Hermes' reason (``None``: unknown)."""

    name: str
    reason: str | None


def read_agent_log(hermes_home: Path) -> str:
    """The attempt's ``agent.log`` (empty when Hermes wrote none)."""
    try:
        return hermes_home.joinpath(*AGENT_LOG).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text[:MAX_REASON] + ("…" if len(text) > MAX_REASON else "")


def unusable_servers(log_text: str, names: Iterable[str]) -> list[UnusableServer]:
    """The servers among ``names`` that ``log_text`` does not show connected, in order.

    The reason is Hermes' final "Failed to connect" (or "Skipping suspicious") message, else
    its last logged connection retry, else ``None`` (discovery never finished).
    """
    connected: set[str] = set()
    reasons: dict[str, str] = {}
    tries: dict[str, str] = {}
    for line in log_text.splitlines():
        if found := _REGISTERED.search(line):
            connected.add(found["name"])
        elif found := _FAILED.search(line) or _SKIPPED.search(line):
            reasons[found["name"]] = _short(found["why"])
        elif found := _LAST_TRY.search(line):
            tries[found["name"]] = _short(found["why"])
    return [
        UnusableServer(name, reasons.get(name) or tries.get(name))
        for name in names
        if name not in connected
    ]


def unusable_message(servers: list[UnusableServer]) -> str:
    """One message for the user naming every unusable server and what Hermes said."""
    return unusable_mcp_message(
        "Hermes", [(s.name, s.reason or "it never reported connecting") for s in servers]
    )
