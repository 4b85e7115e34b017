"""pytest plugin: end-to-end tests are marked, and in CI they may not skip.

Enable it in a root ``conftest.py`` (Caliper's own suite does)::

    pytest_plugins = ["caliper.testing.e2e_policy"]

Two rules:

* **A skipped end-to-end test fails when** ``CALIPER_REQUIRE_E2E=1`` (CI sets it). A test marked
  ``@pytest.mark.e2e`` skips when it cannot run its real agent CLI: no loopback-only network
  namespace, or the pinned CLI is not provisioned. On a laptop that is a useful skip; in CI it
  would hide that nothing was tested, so there the skip becomes a failure that quotes the reason.
* **A test that starts a pinned agent CLI must be marked** ``e2e``. While a test runs, every
  subprocess it starts is checked: when the program, or a path in the environment it is given
  (``PATH`` folders, ``<CLI>_CLI_PATH``), leads into the provisioned CLIs folder
  (:func:`caliper.testing.agent_clis.agent_clis_dir`), and the test has no ``e2e`` marker, the
  test fails and names the program. This catches CLIs started through the ``caliper`` command,
  a backend object, or a fixture of any scope.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from caliper.testing import agent_clis

REQUIRE_E2E_ENV = "CALIPER_REQUIRE_E2E"
MARKER = "e2e"
MARKER_HELP = "e2e: drives a real agent CLI (a test that starts one must carry this marker)"

_current: list[pytest.Item] = []  # the test running now (setup, call and teardown)
_violations: dict[str, list[str]] = {}  # test id -> real CLIs it started without the marker
_original_popen_init = subprocess.Popen.__init__


def require_e2e() -> bool:
    """Whether a skipped ``e2e`` test is a failure (``CALIPER_REQUIRE_E2E=1``)."""
    return os.environ.get(REQUIRE_E2E_ENV) == "1"


def _resolved(path: Path) -> Path:
    """``path`` with symlinks resolved, or as given when that fails (a loop, a bad mount)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def _clis_prefixes() -> tuple[str, ...]:
    base = agent_clis.agent_clis_dir()
    return tuple({str(base), str(_resolved(base))})


def _inside(path: Path, prefixes: Sequence[str]) -> bool:
    """Whether ``path`` (as given, or resolved) lies strictly inside one of ``prefixes``."""
    for candidate in (str(path), str(_resolved(path))):
        if any(candidate.startswith(p + os.sep) for p in prefixes):
            return True
    return False


def _paths_in(env: Mapping[str, str], inherited_path: set[str]) -> Iterator[Path]:
    """Paths an explicitly given environment points at: its values, and the PATH folders it
    adds to the inherited ones (with their files); an inherited PATH folder is not the
    test's choice."""
    for key, value in env.items():
        if key == "CALIPER_AGENT_CLIS":  # where the CLIs are, not one of them
            continue
        for part in value.split(os.pathsep):
            if not part.startswith(os.sep):
                continue
            if key == "PATH" and part in inherited_path:
                continue  # passed on from the test process (e.g. `. .agent-clis/env.sh`)
            path = Path(part)
            yield path
            if key == "PATH" and path.is_dir():
                try:
                    yield from sorted(path.iterdir())[:64]
                except OSError:
                    continue


def real_cli_in(
    args: Any, env: Mapping[str, str] | None, *, executable: Any = None, shell: bool = False
) -> str | None:
    """The pinned-CLI path a ``Popen(args, env=env, ...)`` would lead to, or None."""
    prefixes = _clis_prefixes()
    argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args or [])
    first = executable if executable is not None else (argv[0] if argv else None)
    program = os.fsdecode(first) if first is not None else ""
    if shell and executable is None:
        program = program.split()[0] if program.split() else ""
    if program:
        search = (env if env is not None else os.environ).get("PATH")
        found = program if os.sep in program else shutil.which(program, path=search)
        if found and _inside(Path(found), prefixes):
            return found
    if env is not None:
        inherited = set(os.environ.get("PATH", "").split(os.pathsep))
        for path in _paths_in(env, inherited):
            if _inside(path, prefixes):
                return str(path)
    return None


def _watching_popen_init(self: subprocess.Popen, args: Any, *rest: Any, **kwargs: Any) -> None:
    if _current:
        item = _current[-1]
        if item.get_closest_marker(MARKER) is None:
            # Popen(args, bufsize, executable, stdin, stdout, stderr, preexec_fn, close_fds,
            #       shell, cwd, env, ...): the ones that matter, by keyword or position
            named = {"executable": 1, "shell": 7, "env": 9}
            given = {k: kwargs.get(k, rest[i] if len(rest) > i else None) for k, i in named.items()}
            try:
                found = real_cli_in(
                    args, given["env"], executable=given["executable"], shell=bool(given["shell"])
                )
            except Exception:  # the watch must never break the subprocess it looks at
                found = None
            if found:
                _violations.setdefault(item.nodeid, []).append(found)
    _original_popen_init(self, args, *rest, **kwargs)


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker and start watching subprocesses."""
    config.addinivalue_line("markers", MARKER_HELP)
    subprocess.Popen.__init__ = _watching_popen_init  # type: ignore[method-assign]


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop watching subprocesses."""
    subprocess.Popen.__init__ = _original_popen_init  # type: ignore[method-assign]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Remember which test is running, for the subprocess watch."""
    _current.append(item)
    try:
        yield
    finally:
        _current.pop()
        _violations.pop(item.nodeid, None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Turn an unmarked real-CLI test, and (with the switch) a skipped e2e test, into failures."""
    outcome = yield
    report = outcome.get_result()
    started = _violations.get(item.nodeid)
    if started and report.when == "teardown":
        shown = ", ".join(sorted(set(started)))
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} started a real agent CLI ({shown}) but is not marked "
            f"@pytest.mark.{MARKER}. Mark it (or its module: pytestmark = pytest.mark.{MARKER})."
        )
        return
    if report.skipped and require_e2e() and item.get_closest_marker(MARKER) is not None:
        if hasattr(report, "wasxfail"):
            return
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        report.outcome = "failed"
        report.longrepr = (
            f"{REQUIRE_E2E_ENV}=1: the end-to-end test {item.nodeid} was skipped, which counts "
            f"as a failure here. Skip reason: {reason}"
        )
