"""Check the ``mcp:`` block of a spec and build :class:`McpServer` entries from it.

A server is either local (``type`` omitted or ``stdio``: ``command``, ``args``, ``env``) or
remote (``type: http`` or ``sse``: ``url``, ``headers``); the two sets of fields exclude each
other. ``${VAR}`` references are allowed in env values, header values and the url, and are
left unresolved here.
"""

from __future__ import annotations

import re
from typing import Any

from caliper.spec.fields import Reporter, did_you_mean, type_name
from caliper.spec.model import McpServer

SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
VAR_REFERENCE = re.compile(r"\$\{([^}]*)\}")
TRANSPORTS = ("stdio", "http", "sse")
STDIO_KEYS = ("type", "command", "args", "env")
REMOTE_KEYS = ("type", "url", "headers")


def variable_problem(text: str) -> str | None:
    """Why the ``${VAR}`` references in ``text`` are malformed, or ``None``."""
    for match in VAR_REFERENCE.finditer(text):
        if not ENV_NAME.match(match.group(1)):
            return (
                f"{match.group(0)!r} is not a valid variable reference; write ${{NAME}} with "
                "letters, digits and underscores"
            )
    stripped = VAR_REFERENCE.sub("", text)
    if "${" in stripped:
        return "an unclosed '${': write ${NAME}"
    return None


def _string_map(
    report: Reporter,
    path: tuple[Any, ...],
    value: Any,
    *,
    what: str,
    key_pattern: re.Pattern[str],
    key_what: str,
) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        report.error(path, f"expected a mapping of {what}, found {type_name(value)}")
        return {}
    result = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key_pattern.match(key):
            report.error((*path, key), f"{key!r} is not a valid {key_what}", key=True)
            continue
        if not isinstance(item, str):
            hint = " (quote it)" if isinstance(item, (int, float, bool)) else ""
            report.error((*path, key), f"expected a string value, found {type_name(item)}{hint}")
            continue
        if problem := variable_problem(item):
            report.error((*path, key), problem)
            continue
        result[key] = item
    return result


def _check_server(report: Reporter, name: str, entry: Any) -> McpServer | None:
    """Check the server ``name`` of the ``mcp:`` block; the server, or ``None`` when any of its
    fields is wrong (each reported)."""
    path: tuple[Any, ...] = ("mcp", name)
    if not isinstance(entry, dict):
        report.error(
            path,
            f"expected a server mapping (command: … or type: http + url: …), "
            f"found {type_name(entry)}",
        )
        return None
    before = len(report.problems)
    transport = entry.get("type") or "stdio"
    if not isinstance(transport, str) or transport not in TRANSPORTS:
        report.error(
            (*path, "type"),
            f"unknown server type {transport!r}."
            f"{did_you_mean(transport, TRANSPORTS)} Expected stdio (the default), "
            "http or sse.",
        )
        return None
    _check_server_keys(report, path, name, entry, transport)
    if transport == "stdio":
        return _stdio_server(report, path, name, entry, before)
    return _remote_server(report, path, name, entry, transport, before)


def _check_server_keys(
    report: Reporter, path: tuple[Any, ...], name: str, entry: dict, transport: str
) -> None:
    """Report each key of the server ``entry`` that its ``transport`` does not take (naming
    the other transport's keys as such)."""
    own, other = (STDIO_KEYS, REMOTE_KEYS) if transport == "stdio" else (REMOTE_KEYS, STDIO_KEYS)
    for key in entry:
        if key in own:
            continue
        if key in other:
            if transport == "stdio":
                message = (
                    f"a stdio server cannot set {key!r}; for a remote server add "
                    "`type: http` (or sse) and drop command/args/env"
                )
            else:
                message = (
                    f"an {transport} server cannot set {key!r}; command/args/env belong "
                    "to stdio servers (omit `type:`)"
                )
            report.error((*path, key), message, key=True)
        else:
            report.error(
                (*path, key),
                f"unknown key {key!r} in MCP server {name!r}."
                f"{did_you_mean(key, own)} Expected one of: {', '.join(own)}.",
                key=True,
            )


def _stdio_server(
    report: Reporter, path: tuple[Any, ...], name: str, entry: dict, before: int
) -> McpServer | None:
    """Check a local server's ``command``, ``args`` and ``env``; the server, or ``None`` when
    the report gained problems since it held ``before``."""
    if "command" not in entry:
        report.error(path, "a stdio server needs `command:` (the program to start)")
        command = None
    else:
        command = report.string((*path, "command"), entry.get("command"), what="a command")
    args = report.string_list((*path, "args"), entry.get("args"), what="arguments") or []
    for index, arg in enumerate(args):
        if "${" in arg:
            report.warn(
                (*path, "args", index),
                "${VAR} is only resolved in env values, header values and url; "
                "this argument is passed as written",
            )
    env = _string_map(
        report,
        (*path, "env"),
        entry.get("env"),
        what="environment variables",
        key_pattern=ENV_NAME,
        key_what="environment variable name",
    )
    if len(report.problems) != before:
        return None
    return McpServer(name=name, transport="stdio", command=command, args=tuple(args), env=env)


def _remote_server(
    report: Reporter, path: tuple[Any, ...], name: str, entry: dict, transport: str, before: int
) -> McpServer | None:
    """Check a remote (``http`` or ``sse``) server's ``url`` and ``headers``; the server, or
    ``None`` when the report gained problems since it held ``before``."""
    if "url" not in entry:
        report.error(path, f"an {transport} server needs `url:`")
        url = None
    else:
        url = report.string((*path, "url"), entry.get("url"), what="a URL")
        if url is not None:
            if problem := variable_problem(url):
                report.error((*path, "url"), problem)
            elif not url.startswith("${") and not re.match(r"^https?://[^\s/]", url):
                report.error((*path, "url"), f"{url!r} is not an http:// or https:// URL")
    headers = _string_map(
        report,
        (*path, "headers"),
        entry.get("headers"),
        what="HTTP headers",
        key_pattern=HEADER_NAME,
        key_what="HTTP header name",
    )
    if len(report.problems) != before:
        return None
    return McpServer(name=name, transport=transport, url=url, headers=headers)


def check_mcp(report: Reporter, value: Any) -> tuple[McpServer, ...]:
    """Validate the ``mcp:`` mapping; returns the servers that are fine."""
    if value is None:
        return ()
    if not isinstance(value, dict):
        report.error(
            ("mcp",), f"expected a mapping of server name → server, found {type_name(value)}"
        )
        return ()
    servers = []
    for name, entry in value.items():
        if not isinstance(name, str) or not SERVER_NAME.match(name):
            report.error(
                ("mcp", name),
                f"server name {name!r} may only hold letters, digits, "
                "'_' and '-' (it becomes part of the tool names mcp__<server>__<tool>)",
                key=True,
            )
            continue
        server = _check_server(report, name, entry)
        if server is not None:
            servers.append(server)
    return tuple(servers)
