"""A task's shell steps inside its attempt sandbox: ``setup:``, ``cleanup:`` and ``extra_path``.

The sandbox itself (made, removed) is :mod:`caliper.plugin.sandbox`; this module runs the
spec's own commands in it and describes how they ended.
"""

from __future__ import annotations

from pathlib import Path

from caliper.plugin.attempt import AttemptSandbox
from caliper.plugin.sandbox import resolve_extra_path as resolve_extra_path  # re-exported
from caliper.system.process import ProcessResult, run_process

SPEC_DIR_VARIABLE = "CALIPER_SPEC_DIR"
"""Set for a task's ``setup:`` and ``cleanup:`` commands to the spec's folder."""


def run_shell(
    command: str,
    sandbox: AttemptSandbox,
    *,
    timeout: float,
    keep_on_stop: bool = False,
    spec_dir: Path | None = None,
) -> ProcessResult:
    """Run a task's ``setup``/``cleanup`` command with ``/bin/sh -c`` inside the sandbox.

    ``keep_on_stop`` (cleanups) lets it finish after a first Ctrl-C; a second one ends it.
    ``spec_dir`` (the spec's folder) is given to the command as ``CALIPER_SPEC_DIR``, so a
    spec can name its own files by a path relative to itself.
    """
    env = dict(sandbox.base_env)
    if spec_dir is not None:
        env[SPEC_DIR_VARIABLE] = str(spec_dir)
    return run_process(
        ["/bin/sh", "-c", command],
        env=env,
        cwd=sandbox.workdir,
        timeout=timeout,
        keep_on_stop=keep_on_stop,
    )


def describe_shell_failure(kind: str, result: ProcessResult, timeout: float) -> str | None:
    """A one-line reason when a setup/cleanup command failed, ``None`` when it succeeded."""
    if result.timed_out:
        return f"{kind} timed out after {timeout:g}s"
    if result.interrupted:
        return f"{kind} was interrupted"
    if result.returncode != 0:
        tail = result.stderr_tail(5) or result.stdout.strip()[-500:]
        detail = f": {tail}" if tail else ""
        return f"{kind} exited with status {result.returncode}{detail}"
    return None
