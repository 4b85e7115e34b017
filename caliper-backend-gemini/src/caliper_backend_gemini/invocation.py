"""The ``gemini`` command lines caliper runs. The prompt always travels on stdin.

Attempts run with ``--yolo`` (nobody is there to approve a tool call; the attempt lives in a
throw-away HOME and working directory) and ``--skip-trust`` (without it Gemini CLI drops
``--yolo`` in a folder it does not trust). Output is ``-o stream-json``: one JSON event a line.
Judge calls run in the ``default`` approval mode, where headless Gemini CLI offers the model
no tool that would need an approval (no shell, no file edits).
"""

from __future__ import annotations

from pathlib import Path

BASE_FLAGS = ("--output-format", "stream-json", "--skip-trust")


def attempt_argv(cli: Path, *, model: str | None) -> list[str]:
    """A headless, unattended agent run on the task prompt (read from stdin)."""
    argv = [str(cli), *BASE_FLAGS, "--approval-mode", "yolo"]
    return [*argv, "--model", model] if model else argv


def prompt_argv(cli: Path, *, model: str | None) -> list[str]:
    """A single question for a judge, with no tool that changes anything."""
    argv = [str(cli), *BASE_FLAGS, "--approval-mode", "default"]
    return [*argv, "--model", model] if model else argv
