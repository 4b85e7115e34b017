"""``python -m caliper.testing.demo``: a complete caliper run with no account and no network.

It runs ``examples/hello/hello.eval.yaml`` through the real, provisioned ``claude`` CLI, whose
"model" is the scripted model server on 127.0.0.1 (``examples/hello/scripted-model.yaml``),
inside a loopback-only network namespace. Everything a real run does happens: isolated homes, skills
installed where Claude Code discovers them, the agent's own tools, ``assert:``, the ``expect:``
judge, the activation scoreboard, and a saved results file.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from caliper.testing import agent_clis
from caliper.testing.harness import caliper_executable
from caliper.testing.offline import loopback_only


def _example_dir() -> Path:
    return agent_clis.repo_root() / "examples" / "hello"


def main(argv: list[str] | None = None) -> int:
    """Run the demo; extra arguments are passed to ``caliper run`` (e.g. ``--k 3``)."""
    extra = list(sys.argv[1:] if argv is None else argv)
    isolated, why = loopback_only()
    if not isolated and os.environ.get("CALIPER_OFFLINE") is None:
        wrapper = [sys.executable, "-m", "caliper.testing.offline", "--"]
        return subprocess.call([*wrapper, sys.executable, "-m", "caliper.testing.demo", *extra])
    example = _example_dir()
    claude = agent_clis.bin_path("claude")
    if not claude.exists():
        print(
            f"The demo needs the pinned claude CLI at {claude}.\n"
            f"Provision it first: {agent_clis.INSTALL_COMMAND}",
            file=sys.stderr,
        )
        return 3
    from caliper.testing.model_server import ModelServer

    with (
        ModelServer(example / "scripted-model.yaml") as server,
        tempfile.TemporaryDirectory(prefix="caliper-demo-home-") as home,
    ):
        env = {
            **os.environ,
            "HOME": home,  # a stand-in for the user's home: attempts never write to it
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "sk-demo-not-a-real-key",
            "PATH": f"{agent_clis.shim_dir()}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        command = [
            str(caliper_executable()),
            "run",
            str(example / "hello.eval.yaml"),
            "--k",
            "2",
            "--model",
            "claude-code",
            "--judge-model",
            "claude-code",
            *extra,
        ]
        print(echoed(command), file=sys.stderr)
        print(
            f"(claude → scripted model at {server.url}; {why or 'loopback only'})", file=sys.stderr
        )
        return subprocess.call(command, env=env, cwd=example)


def echoed(command: list[str]) -> str:
    """The command as a user would type it: ``$ caliper run …`` (shell-quoted)."""
    import shlex

    return "$ " + shlex.join(["caliper", *command[1:]])


if __name__ == "__main__":
    sys.exit(main())
