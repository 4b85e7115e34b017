"""The ``codex exec`` command lines caliper runs. The prompt always travels on stdin (``-``).

Attempts run with ``--dangerously-bypass-approvals-and-sandbox``: nobody is there to approve
a command, the attempt already lives in a throw-away HOME and working directory, and Codex's
own sandbox (bubblewrap on Linux) both fails in many containers and hides the commands it
blocks from the event stream. Judge calls run ``-s read-only`` and ``--ephemeral``.
"""

from __future__ import annotations

from pathlib import Path

BASE_FLAGS = ("exec", "--json", "--skip-git-repo-check", "--color", "never")
STDIN_PROMPT = "-"


def attempt_argv(cli: Path, *, model: str | None) -> list[str]:
    """A headless, unattended agent run on the task prompt."""
    argv = [str(cli), *BASE_FLAGS, "--dangerously-bypass-approvals-and-sandbox"]
    if model:
        argv += ["--model", model]
    return [*argv, STDIN_PROMPT]


def prompt_argv(cli: Path, *, model: str | None) -> list[str]:
    """A single question in a read-only sandbox with no saved session (judging)."""
    argv = [str(cli), *BASE_FLAGS, "--sandbox", "read-only", "--ephemeral"]
    if model:
        argv += ["--model", model]
    return [*argv, STDIN_PROMPT]
