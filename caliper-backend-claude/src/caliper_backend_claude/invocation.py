"""The ``claude`` command lines caliper runs. The prompt always travels on stdin."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

STREAM_FLAGS = ("-p", "--output-format", "stream-json", "--verbose")


def attempt_argv(cli: Path, *, model: str | None, mcp_argv: Sequence[str] = ()) -> list[str]:
    """A headless, unattended agent run.

    Permissions are bypassed (nobody is there to approve a tool call) and only the MCP servers
    caliper passes are loaded (``--strict-mcp-config`` also when there are none, so a
    ``.mcp.json`` a task leaves in the workdir is ignored).
    """
    argv = [str(cli), *STREAM_FLAGS, "--dangerously-skip-permissions", "--strict-mcp-config"]
    argv += list(mcp_argv)
    if model:
        argv += ["--model", model]
    return argv


def prompt_argv(cli: Path, *, model: str | None) -> list[str]:
    """A single question with no tools, no skills, no MCP and no saved session (judging)."""
    argv = [
        str(cli),
        *STREAM_FLAGS,
        "--tools",
        "",
        "--strict-mcp-config",
        "--disable-slash-commands",
        "--no-session-persistence",
    ]
    if model:
        argv += ["--model", model]
    return argv
