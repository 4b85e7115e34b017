"""A tiny stdio MCP server for tests: one tool, ``echo``, answering ``echo: <text>``.

JSON-RPC 2.0, one message per line on stdin/stdout, standard library only. Every message it
receives is appended as a JSON line to the file named by ``--log`` or ``$MCP_ECHO_LOG``, so a
test can prove the agent really called the tool.

    python -m caliper.testing.mcp_echo [--log FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

SERVER_INFO = {"name": "caliper-mcp-echo", "version": "0.1.0"}
DEFAULT_PROTOCOL = "2025-06-18"
ECHO_TOOL = {
    "name": "echo",
    "description": "Echo the given text back, prefixed with 'echo: '.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "Text to echo."}},
        "required": ["text"],
    },
}


def handle(message: dict[str, Any]) -> dict[str, Any] | None:
    """The reply to one JSON-RPC message (None for notifications)."""
    method = message.get("method")
    params = message.get("params") or {}
    if "id" not in message:
        return None
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    if method == "initialize":
        reply["result"] = {
            "protocolVersion": params.get("protocolVersion", DEFAULT_PROTOCOL),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": SERVER_INFO,
        }
    elif method == "tools/list":
        reply["result"] = {"tools": [ECHO_TOOL]}
    elif method == "tools/call":
        args = params.get("arguments") or {}
        if params.get("name") != "echo":
            reply["result"] = {
                "content": [{"type": "text", "text": f"unknown tool {params.get('name')!r}"}],
                "isError": True,
            }
        else:
            text = f"echo: {args.get('text', '')}"
            reply["result"] = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        reply["result"] = {}
    elif method in ("resources/list", "prompts/list", "resources/templates/list"):
        key = method.split("/")[0] if method != "resources/templates/list" else "resourceTemplates"
        reply["result"] = {key: []}
    else:
        reply["error"] = {"code": -32601, "message": f"method not found: {method}"}
    return reply


def serve(log: Path | None) -> int:
    """Read messages until stdin closes."""
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if log is not None:
            with log.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(message) + "\n")
        if not isinstance(message, dict):
            continue
        reply = handle(message)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(prog="python -m caliper.testing.mcp_echo")
    parser.add_argument("--log", help="append received messages here (default: $MCP_ECHO_LOG)")
    args = parser.parse_args(argv)
    log = args.log or os.environ.get("MCP_ECHO_LOG")
    return serve(Path(log) if log else None)


if __name__ == "__main__":
    sys.exit(main())
