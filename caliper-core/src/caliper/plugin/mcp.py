"""Resolving ``${VAR}`` references in a spec's ``mcp:`` servers, for one run, in memory.

A spec commits references, never secrets: ``Authorization: Bearer ${TOKEN}``. The runner
resolves them from the caller's environment just before the first attempt. The resolved
values live only in memory and in each attempt's private folder, and :class:`SecretSet`
lets the runner scrub them from anything it saves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from caliper.errors import SetupError
from caliper.plugin.attempt import AttemptResult, McpServerConfig, Turn
from caliper.plugin.mcp_server import McpServer
from caliper.system import attrs_classes

VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
MIN_SECRET_LENGTH = 4
REDACTED = "[redacted]"


@attrs_classes.frozen
class ResolvedMcp:
    """Servers with references substituted, and every value that came from a reference."""

    servers: tuple[McpServerConfig, ...]
    secrets: SecretSet


@attrs_classes.frozen
class SecretSet:
    """Strings that must never be saved: resolved variable values and the fields holding them."""

    values: frozenset[str] = frozenset()

    def redact(self, text: str | None) -> str | None:
        """``text`` with every secret replaced by ``[redacted]`` (longest first)."""
        if text is None or not self.values:
            return text
        for value in sorted(self.values, key=len, reverse=True):
            text = text.replace(value, REDACTED)
        return text

    def redact_value(self, value: Any) -> Any:
        """Redact strings inside nested dicts/lists/tuples (tool inputs), keeping the shape."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, Mapping):
            return {k: self.redact_value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.redact_value(v) for v in value)
        return value

    def redact_result(self, result: AttemptResult) -> AttemptResult:
        """``result`` as it may leave the attempt (to judges, LLM judges' prompts included):
        secrets removed from its final answer, transcript and error."""
        if not self.values:
            return result
        return attrs.evolve(
            result,
            final_answer=self.redact(result.final_answer),
            transcript=tuple(self.redact_turns(result.transcript)),
            error=self.redact(result.error),
        )

    def redact_turns(self, turns: Iterable[Turn]) -> list[Turn]:
        """A transcript with secrets removed from text, tool inputs and tool outputs."""
        if not self.values:
            return list(turns)
        return [
            attrs.evolve(
                turn,
                content=self.redact(turn.content),
                tool_input=self.redact_value(turn.tool_input),
                tool_output=self.redact(turn.tool_output),
            )
            for turn in turns
        ]


def _substitute(
    text: str, *, server: str, field: str, environ: Mapping[str, str], found: set[str]
) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        value = environ.get(name)
        if value is None:
            raise SetupError(
                f"MCP server {server!r}: {field} refers to ${{{name}}}, but {name} is not set "
                "in your environment.",
                hint=f"Export {name} before `caliper run` (the spec keeps only the reference), "
                f"or remove it from the server's {field.split('.')[0]}.",
            )
        if len(value) >= MIN_SECRET_LENGTH:
            found.add(value)
        return value

    resolved = VARIABLE.sub(replace, text)
    if resolved != text and len(resolved) >= MIN_SECRET_LENGTH:
        found.add(resolved)
    return resolved


def resolve_servers(servers: Sequence[McpServer], environ: Mapping[str, str]) -> ResolvedMcp:
    """Substitute ``${VAR}`` in each server's env values, header values and URL.

    Raises :class:`SetupError` naming the server, the field and the variable for the first
    reference whose variable is unset, so the run fails before any attempt.
    """
    found: set[str] = set()
    resolved: list[McpServerConfig] = []
    for server in servers:
        env = {
            key: _substitute(
                value, server=server.name, field=f"env.{key}", environ=environ, found=found
            )
            for key, value in server.env.items()
        }
        headers = {
            key: _substitute(
                value, server=server.name, field=f"headers.{key}", environ=environ, found=found
            )
            for key, value in server.headers.items()
        }
        url = (
            _substitute(server.url, server=server.name, field="url", environ=environ, found=found)
            if server.url
            else None
        )
        resolved.append(
            McpServerConfig(
                name=server.name,
                transport=server.transport,
                command=server.command,
                args=tuple(server.args),
                env=env,
                url=url,
                headers=headers,
            )
        )
    return ResolvedMcp(servers=tuple(resolved), secrets=SecretSet(frozenset(found)))


class EnvReferences:
    """Keeps resolved secrets out of an agent's config file, for agents that expand references.

    Calling it with a secret returns a reference to a new variable ``CALIPER_MCP_SECRET_n`` to
    write into the config, and records the value in :attr:`env`, which the backend passes in the
    agent's process environment (``NativeMcpConfig.env``). ``template`` is the agent's own
    reference syntax with ``NAME`` where the variable name goes: ``"${NAME}"`` (the default:
    Claude Code, Codex, pi, Hermes) or, for opencode, ``"{env:NAME}"``. With
    ``empty_as_literal``, an empty value is written as ``""`` rather than referenced (for agents
    that treat an empty variable as unset).
    """

    PREFIX = "CALIPER_MCP_SECRET_"
    DEFAULT_TEMPLATE = "${NAME}"

    def __init__(self, *, empty_as_literal: bool = False, template: str = DEFAULT_TEMPLATE):
        if "NAME" not in template:
            raise ValueError(f"reference template {template!r} has no NAME placeholder")
        self.env: dict[str, str] = {}
        self.empty_as_literal = empty_as_literal
        self.template = template

    def __call__(self, value: str) -> str:
        """A reference to a fresh variable holding ``value`` (recorded in :attr:`env`)."""
        if value == "" and self.empty_as_literal:
            return ""
        name = f"{self.PREFIX}{len(self.env)}"
        self.env[name] = value
        return self.template.replace("NAME", name)
