"""The one message for "the agent could not use the spec's MCP server(s)", for every backend.

Agents that run on without a server they could not reach (Claude Code, pi, Hermes) make the
backend stop the attempt with a setup error; this builds its text, so the user reads the same
sentence whatever the agent, with what that agent said about each server and the agent's own
way to look closer.
"""

from __future__ import annotations

from collections.abc import Sequence

ADVICE = (
    "Check that the server is running and reachable, that its command starts, and that its "
    "url and headers (and the variables they refer to) are accepted."
)


def unusable_mcp_message(
    agent: str,
    servers: Sequence[tuple[str, str | None]],
    *,
    look_closer: str = "",
) -> str:
    """``agent`` could not use ``servers`` (``(name, reason or None)``): the attempt is stopped.

    ``look_closer`` is an optional last sentence: how to see the agent's own error (e.g.
    ``Run `pi mcp list` …``) or why the agent gave no reason.
    """
    listed = ", ".join(f"'{name}' ({why})" if why else f"'{name}'" for name, why in servers)
    one = len(servers) == 1
    message = (
        f"{agent} could not use the spec's MCP {'server' if one else 'servers'} {listed}: "
        f"the attempt would run without {'its' if one else 'their'} tools, so it is stopped "
        f"and not scored. {ADVICE}"
    )
    return f"{message} {look_closer}" if look_closer else message
