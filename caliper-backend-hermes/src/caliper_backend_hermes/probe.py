"""Questions about an installed Hermes answered by its own interpreter, never by ``hermes``.

``hermes --version`` asks PyPI for the newest release, so caliper reads the package metadata
instead. Answers are cached per CLI path for the life of the process.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from caliper.plugin import run_process
from caliper_backend_hermes.invocation import console_script_python

PROBE_TIMEOUT = 30.0
_CLEAN_PATH = "import sys; sys.path = [p for p in sys.path if p]; "
"""Drop the working directory from ``sys.path`` so no stray file shadows the module asked."""


def _ask(cli: Path, code: str) -> tuple[bool, str] | None:
    python = console_script_python(cli)
    if python is None:
        return None
    result = run_process(
        [str(python), "-c", _CLEAN_PATH + code],
        env={"PATH": os.environ.get("PATH", os.defpath)},
        cwd=cli.parent,
        timeout=PROBE_TIMEOUT,
    )
    return result.returncode == 0, result.stdout.strip()


@functools.lru_cache(maxsize=8)
def installed_version(cli: Path) -> str | None:
    """The ``hermes-agent`` version behind ``cli`` (``None`` when it cannot be read)."""
    answer = _ask(cli, "import importlib.metadata as m; print(m.version('hermes-agent'))")
    return answer[1] if answer and answer[0] and answer[1] else None


@functools.lru_cache(maxsize=8)
def has_mcp_support(cli: Path) -> bool:
    """Whether Hermes can import its MCP client (optimistic when the interpreter is unknown)."""
    answer = _ask(cli, "import mcp")
    return answer is None or answer[0]
