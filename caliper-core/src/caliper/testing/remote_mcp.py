"""End-to-end check of a remote (Streamable HTTP) MCP server whose header holds a secret.

A backend's test builds a :class:`~caliper.testing.conformance_kit.ConformanceKit` and calls
:func:`check_remote_mcp_tool_call`. It starts :class:`~caliper.testing.mcp_echo.HttpEchoServer`,
writes a spec whose ``mcp:`` server is ``type: http`` with
``Authorization: Bearer ${CALIPER_E2E_MCP_TOKEN}``, runs the real ``caliper run`` with that
variable set in the caliper process's environment only, and checks that:

* the model's ``echo`` call went to the HTTP server and its output is in the saved transcript
  under the backend's ``mcp_tool_name(<server>, "echo")``;
* the server received the *resolved* header on every POST;
* the secret is in no file of the saved results, under the sandbox parent (where the
  deleted attempt lived, TMPDIR included), in the (fake) real home, or in any file of the
  system temp folder written during the run (the server's own log aside), and it was never
  sent to the model.

Each check uses a fresh secret, so parallel runs never see each other's values. With
``sse=True`` the server answers every POST as an SSE stream, as many real servers do.
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from caliper.testing.conformance_kit import ConformanceKit, ok_run, tool_turns
from caliper.testing.harness import CaliperRun
from caliper.testing.mcp_echo import HttpEchoServer
from caliper.testing.model_server import ModelServer
from caliper.testing.script import ToolCall

SECRET_VARIABLE = "CALIPER_E2E_MCP_TOKEN"
PING = "REMOTE-PING-31"
MAX_SCANNED_BYTES = 20_000_000


def call_dict(call: ToolCall) -> dict[str, Any]:
    """A :class:`ToolCall` as a script's ``tool_calls`` entry."""
    out: dict[str, Any] = {"name": call.name, "arguments": call.arguments}
    if call.namespace:
        out["namespace"] = call.namespace
    return out


def new_secret() -> str:
    """A distinctive value, so a leak anywhere is found by a plain substring search."""
    return f"remote-mcp-secret-{uuid.uuid4().hex[:16]}"


def _holds(path: Path, data: bytes) -> bool:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_SCANNED_BYTES:
            return False
        return data in path.read_bytes()
    except OSError:  # vanished or unreadable (another process's file)
        return False


def files_containing(needle: str, roots: Iterable[Path]) -> list[str]:
    """Every regular file under ``roots`` whose bytes contain ``needle`` (links not followed)."""
    data = needle.encode()
    found: list[str] = []
    for root in roots:
        if root.exists():
            found += [str(p) for p in [root, *root.rglob("*")] if _holds(p, data)]
    return found


def temp_files_containing(
    needle: str, since: float, *, skip: Iterable[Path] = (), root: Path | None = None
) -> list[str]:
    """Files in the temp folder (``root``), modified at or after ``since``, holding ``needle``."""
    data = needle.encode()
    skipped = {str(p) for p in skip}
    found: list[str] = []
    for folder, _, names in os.walk(root or tempfile.gettempdir()):
        for name in names:
            path = os.path.join(folder, name)
            try:
                recent = os.lstat(path).st_mtime >= since
            except OSError:
                continue
            if recent and path not in skipped and _holds(Path(path), data):
                found.append(path)
    return found


def remote_spec(kit: ConformanceKit, echo: HttpEchoServer, server_name: str) -> Path:
    """The spec: one task, one ``type: http`` server whose header refers to the secret."""
    mcp = {
        server_name: {
            "type": "http",
            "url": echo.url,
            "headers": {"Authorization": f"Bearer ${{{SECRET_VARIABLE}}}"},
        }
    }
    task = {"name": "remote-mcp", "prompt": "Echo it remotely.", "assert": "assert True"}
    return kit.spec([task], mcp=mcp)


def run_remote_mcp(
    kit: ConformanceKit,
    echo: HttpEchoServer,
    secret: str,
    *,
    server_name: str = "remote",
    **run_args: Any,
) -> tuple[CaliperRun, ModelServer]:
    """Run the spec with ``$CALIPER_E2E_MCP_TOKEN=secret``; the model calls ``echo`` once."""
    call = kit.suite.mcp_call(server_name, "echo", {"text": PING})
    turns = [{"tool_calls": [call_dict(call)]}, {"text": "Echoed remotely."}]
    server = kit.server(kit.script(turns))
    env: Mapping[str, str] = {SECRET_VARIABLE: secret, **run_args.pop("env", {})}
    run = kit.run(remote_spec(kit, echo, server_name), server, env=env, **run_args)
    return run, server


def assert_no_leak(
    kit: ConformanceKit,
    run: CaliperRun,
    server: ModelServer,
    secret: str,
    *,
    since: float,
    echo_log: Path,
) -> None:
    """The secret is in no saved result, leftover, home or temp file, and not in any request."""
    results = kit.project / ".caliper"
    leaks = files_containing(secret, [results, run.sandbox_parent, kit.home.path])
    leaks += temp_files_containing(secret, since, skip=[echo_log])
    assert not leaks, f"the secret was written to: {sorted(set(leaks))}"
    assert secret not in run.stdout + run.stderr, run.describe()
    assert secret not in server.all_sent_text(), "the secret reached the model"


def check_remote_mcp_tool_call(
    kit: ConformanceKit, *, server_name: str = "remote", sse: bool = False
) -> None:
    """The whole check (see the module docstring); asserts on failure."""
    secret = new_secret()
    log = kit.root / "mcp-http.log"
    since = time.time() - 1  # file times may be coarser than the clock
    with HttpEchoServer(log=log, prefer_sse=sse) as echo:
        run, server = run_remote_mcp(kit, echo, secret, server_name=server_name)
    attempt = ok_run(run)
    tool_name = kit.suite.backend().mcp_tool_name(server_name, "echo")
    named = [t for t in tool_turns(attempt) if t.get("tool_name") == tool_name]
    assert named, f"no {tool_name} turn: {tool_turns(attempt)}\n{run.describe()}"
    assert PING in (named[0].get("tool_output") or ""), named[0]
    calls = echo.messages("tools/call")
    assert [c["params"]["arguments"] for c in calls] == [{"text": PING}], calls
    sent = {r.headers.get("authorization") for r in echo.requests if r.verb == "POST"}
    assert sent == {f"Bearer {secret}"}, [
        (r.verb, r.path, r.headers.get("authorization")) for r in echo.requests
    ]
    if sse:
        assert all(r.verb != "POST" or r.status != 200 or r.sse for r in echo.requests)
    assert_no_leak(kit, run, server, secret, since=since, echo_log=log)
    assert not run.home_changes, run.home_changes


def check_unusable_server_stops_run(
    kit: ConformanceKit, why: str, *, server_name: str = "remote"
) -> None:
    """A remote server that refuses the token (``why="refused"``) or is not listening
    (``why="down"``) stops the run (exit 3, one message naming the server) instead of
    letting attempts run, and be scored, without the server's tools.
    """
    secret = new_secret()
    log = kit.root / "mcp-http.log"
    since = time.time() - 1
    echo = HttpEchoServer(log=log, required_headers={"Authorization": "Bearer other-token"})
    with echo:
        if why == "down":
            echo.stop()  # the port is free again: connections are refused
        run, server = run_remote_mcp(kit, echo, secret, server_name=server_name)
    assert run.returncode == 3, run.describe()
    assert server_name in run.stderr, run.describe()
    assert "Traceback" not in run.stderr + run.stdout
    assert not any(a["outcome"] == "pass" for a in run.attempts()), run.describe()
    assert not echo.messages("tools/call"), "a tool was called on a refusing server"
    assert_no_leak(kit, run, server, secret, since=since, echo_log=log)


def check_broken_stdio_server_stops_run(
    kit: ConformanceKit, *, server_name: str = "dead-7"
) -> None:
    """A stdio server whose command exits at once stops the run (exit 3, naming the server)
    instead of letting attempts be scored without its tools."""
    import sys

    mcp = {server_name: {"command": sys.executable, "args": ["-c", "raise SystemExit(4)"]}}
    task = {"name": "broken-mcp", "prompt": "Echo it.", "assert": "assert True"}
    call = call_dict(kit.suite.mcp_call(server_name, "echo", {"text": "x"}))
    server = kit.server(kit.script([{"tool_calls": [call]}, {"text": "Echoed."}]))
    run = kit.run(kit.spec([task], mcp=mcp), server)
    assert run.returncode == 3, run.describe()
    assert server_name in run.stderr, run.describe()  # named, in the CLI's words or ours
    assert "Traceback" not in run.stderr + run.stdout
    assert not any(a["outcome"] == "pass" for a in run.attempts()), run.describe()


__all__ = [
    "PING",
    "SECRET_VARIABLE",
    "assert_no_leak",
    "check_broken_stdio_server_stops_run",
    "check_remote_mcp_tool_call",
    "check_unusable_server_stops_run",
    "files_containing",
    "new_secret",
    "run_remote_mcp",
    "temp_files_containing",
]
