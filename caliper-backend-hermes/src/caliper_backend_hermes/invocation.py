"""How caliper starts the ``hermes`` CLI: which command line, and how the prompt gets in.

Hermes' quiet single-query mode (``hermes chat --query``) takes the prompt only as an
argument, and Linux caps one argument at 128 KiB. When ``hermes`` is the Python console
script pip writes (the usual case), caliper starts the same interpreter with a tiny driver
that reads the prompt from stdin and hands it to Hermes' own ``main()``; only when the CLI is
something else (a wrapper, a binary) does the prompt go on the command line, and then only if
it fits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import attrs

from caliper.plugin import UsageError

MAX_ARGUMENT_BYTES = 128 * 1024 - 1
"""Linux ``MAX_ARG_STRLEN``: the longest single argument ``execve`` accepts (minus the NUL)."""

_DRIVER = """\
import os, sys
sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
prompt = sys.stdin.read()
sys.argv = [sys.argv[1], "chat", "--query=" + prompt, *sys.argv[2:]]
from hermes_cli.main import main
sys.exit(main())
"""
"""Runs Hermes' console entry point with the prompt read from stdin.

The working directory is dropped from ``sys.path`` first: Hermes ships top-level modules
(``cli``, ``run_agent``) that a file in the attempt's workdir must not shadow.
"""

_SHEBANG = re.compile(rb"^#!\s*(/\S*python[0-9.]*)\s*$")
_SH_EXEC = re.compile(rb"^'''exec' '?\"?(/[^\"']*python[0-9.]*)\"?'? \"\$0\" \"\$@\"")


@attrs.frozen
class Launch:
    """A ready command line: ``argv`` plus the text to feed on stdin (``None``: nothing)."""

    argv: tuple[str, ...]
    stdin_text: str | None


def console_script_python(cli: Path) -> Path | None:
    """The interpreter of a pip-generated ``hermes`` console script, or ``None``.

    Reads the shebang (pip writes a ``/bin/sh`` trampoline when the interpreter path is too
    long for one) and only trusts scripts that import ``hermes_cli.main``.
    """
    try:
        with cli.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return None
    if b"hermes_cli.main" not in head:
        return None
    lines = head.splitlines()
    if not lines:
        return None
    found = _SHEBANG.match(lines[0])
    if found is None and lines[0].strip() == b"#!/bin/sh" and len(lines) > 1:
        found = _SH_EXEC.match(lines[1])
    if found is None:
        return None
    python = Path(found.group(1).decode("utf-8", "replace"))
    return python if python.exists() else None


def chat_command(cli: Path, prompt: str, options: Sequence[str]) -> Launch:
    """``hermes chat --query PROMPT OPTIONS…``, with the prompt on stdin when possible."""
    python = console_script_python(cli)
    if python is not None:
        return Launch((str(python), "-c", _DRIVER, str(cli), *options), prompt)
    argument = "--query=" + prompt
    if len(argument.encode("utf-8")) > MAX_ARGUMENT_BYTES:
        raise UsageError(
            f"The prompt is {len(prompt.encode('utf-8'))} bytes, too long to pass to {cli} on "
            "its command line, and that file is not Hermes' Python console script (through "
            "which caliper would pass it on stdin).",
            hint="Point HERMES_CLI_PATH at the `hermes` script inside Hermes' virtualenv, "
            "or shorten the prompt.",
        )
    return Launch((str(cli), "chat", argument, *options), None)


def split_model(model: str | None) -> tuple[str | None, str | None]:
    """``provider/model`` → ``(provider, model)``; a bare name is a model for Hermes to place.

    Only the first ``/`` separates the provider, so OpenRouter slugs keep theirs:
    ``openrouter/anthropic/claude-sonnet-4`` → ``("openrouter", "anthropic/claude-sonnet-4")``.
    """
    if not model or not model.strip():
        return None, None
    model = model.strip()
    if "/" not in model:
        return None, model
    provider, name = (part.strip() for part in model.split("/", 1))
    if not provider or not name:
        raise UsageError(
            f"hermes model {model!r} is not of the form <provider>/<model>.",
            hint="Use e.g. --model hermes:openrouter/anthropic/claude-sonnet-4, or plain "
            "--model hermes to use the default model in your Hermes config.",
        )
    return provider, name


def model_options(model: str | None) -> list[str]:
    """The ``--provider``/``--model`` options selecting ``model`` (none: Hermes' default)."""
    provider, name = split_model(model)
    options: list[str] = []
    if provider:
        options.append(f"--provider={provider}")
    if name:
        options.append(f"--model={name}")
    return options
