"""Running ``caliper`` as a subprocess for tests, and watching what it leaves behind.

Plain helpers (no pytest import): the fixtures in :mod:`caliper.testing.fixtures` and the
conformance kit are built on them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from caliper.system import attrs_classes
from caliper.testing import agent_clis
from caliper.testing.offline import SKIP_REASON, loopback_only

IGNORED_IN_HOME = (".cache/python-entrypoints",)
"""Written by the caliper process itself (stevedore's entry-point cache), never by attempts."""


class FakeRealHome:
    """A stand-in for the user's real home: the HOME the ``caliper`` process runs with.

    Backends read the user's CLI configuration from here; attempts must never write here.
    """

    def __init__(self, path: Path):
        self.path = path
        path.mkdir(parents=True, exist_ok=True)

    def __fspath__(self) -> str:
        return str(self.path)

    def snapshot(self) -> dict[str, str]:
        """``relative path -> content digest`` of everything under the home (links included)."""
        state: dict[str, str] = {}
        for item in sorted(self.path.rglob("*")):
            rel = item.relative_to(self.path).as_posix()
            if any(rel.startswith(p) or p.startswith(rel + "/") for p in IGNORED_IN_HOME):
                continue
            if item.is_symlink():
                state[rel] = f"link:{os.readlink(item)}"
            elif item.is_file():
                state[rel] = hashlib.sha256(item.read_bytes()).hexdigest()
            elif item.is_dir():
                state[rel] = "dir"
        return state

    def changes(self, before: Mapping[str, str]) -> list[str]:
        """What changed since ``before``: ``added: p``, ``removed: p``, ``modified: p``."""
        after = self.snapshot()
        out = [f"added: {p}" for p in sorted(set(after) - set(before))]
        out += [f"removed: {p}" for p in sorted(set(before) - set(after))]
        out += [f"modified: {p}" for p in sorted(set(before) & set(after)) if before[p] != after[p]]
        return out


@attrs_classes.frozen
class AgentCli:
    """A provisioned agent CLI: its executable and a bin folder holding only it.

    ``path`` is what to run (for a CLI pinned to a private Node, the wrapper that puts that
    Node first on PATH); point the backend's ``<NAME>_CLI_PATH`` at it.
    """

    name: str
    path: Path
    bin_dir: Path

    def path_env(self, base: str | None = None) -> str:
        """PATH with this CLI's folder first (``base`` defaults to the current PATH)."""
        rest = os.environ.get("PATH", os.defpath) if base is None else base
        return f"{self.bin_dir}{os.pathsep}{rest}" if rest else str(self.bin_dir)


@attrs_classes.frozen
class CaliperRun:
    """One finished ``caliper`` process."""

    command: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    results_path: Path | None
    results: dict[str, Any] | None
    home_changes: tuple[str, ...]
    sandbox_parent: Path
    duration: float

    def tasks(self) -> list[dict[str, Any]]:
        """The saved tasks (empty when no results were saved)."""
        return list((self.results or {}).get("tasks", []))

    def attempts(self, task: str | None = None) -> list[dict[str, Any]]:
        """Saved attempts of ``task`` (by name), or of every task."""
        return [a for t in self.tasks() if task in (None, t["name"]) for a in t["attempts"]]

    @property
    def attempt(self) -> dict[str, Any]:
        """The only attempt of the run (asserts there is exactly one)."""
        found = self.attempts()
        assert len(found) == 1, f"expected one attempt, got {len(found)}\n{self.describe()}"
        return found[0]

    def describe(self) -> str:
        """Everything useful for an assertion message."""
        return (
            f"$ {' '.join(self.command)}\nexit {self.returncode}\n"
            f"--- stdout\n{self.stdout[-3000:]}\n--- stderr\n{self.stderr[-3000:]}"
        )


def caliper_executable() -> Path:
    """The ``caliper`` console script of the running interpreter's environment."""
    beside = Path(sys.executable).parent / "caliper"
    if beside.exists():
        return beside
    found = shutil.which("caliper")
    if found is None:
        raise RuntimeError(
            "the `caliper` console script is not installed (it comes with caliper-core: "
            "pip install caliper-core)"
        )
    return Path(found)


def _results_files(cwd: Path) -> set[Path]:
    return set((cwd / ".caliper" / "results").glob("*/*.json"))


def run_caliper_process(
    *args: str | os.PathLike[str],
    home: FakeRealHome | Path,
    cwd: Path,
    sandbox_parent: Path,
    env: Mapping[str, str] | None = None,
    path: str | None = None,
    timeout: float = 300,
) -> CaliperRun:
    """Run ``caliper ARGS`` with a minimal environment and collect what it left behind.

    The environment is only: PATH (``path``, default the current one), HOME (the fake real
    home), LANG, ``CALIPER_TMPDIR`` (``sandbox_parent``), ``CALIPER_OFFLINE`` and
    ``CALIPER_TEST_PLUGINS`` when set here, and ``env``. A ``.caliper/`` folder is
    made in ``cwd`` so results are saved there.
    """
    fake_home = home if isinstance(home, FakeRealHome) else FakeRealHome(Path(home))
    (cwd / ".caliper").mkdir(parents=True, exist_ok=True)
    sandbox_parent.mkdir(parents=True, exist_ok=True)
    full_env = {
        "PATH": os.environ.get("PATH", os.defpath) if path is None else path,
        "HOME": str(fake_home.path),
        "LANG": "C.UTF-8",
        "CALIPER_TMPDIR": str(sandbox_parent),
    }
    for inherited in ("CALIPER_OFFLINE", "CALIPER_TEST_PLUGINS"):
        if inherited in os.environ:
            full_env[inherited] = os.environ[inherited]
    full_env.update(env or {})
    command = (str(caliper_executable()), *(str(a) for a in args))
    before_home = fake_home.snapshot()
    before_results = _results_files(cwd)
    start = time.monotonic()
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(
            f"caliper did not finish within {timeout} s: {' '.join(command)}\n{exc.stderr}"
        ) from None
    new = sorted(_results_files(cwd) - before_results, key=lambda p: p.stat().st_mtime)
    results_path = new[-1] if new else None
    results = json.loads(results_path.read_text(encoding="utf-8")) if results_path else None
    return CaliperRun(
        command=command,
        returncode=done.returncode,
        stdout=done.stdout,
        stderr=done.stderr,
        results_path=results_path,
        results=results,
        home_changes=tuple(fake_home.changes(before_home)),
        sandbox_parent=sandbox_parent,
        duration=time.monotonic() - start,
    )


@attrs_classes.frozen
class CliUnavailable:
    """Why a pinned CLI cannot be used here.

    ``kind`` is ``"unknown"`` (no pin of that name), ``"missing"`` (pinned but not provisioned,
    or ``<NAME>_CLI_PATH`` points nowhere) or ``"offline"`` (not in a loopback-only network
    namespace, where no agent CLI may run). ``reason`` says what to do.
    """

    kind: str
    reason: str

    def __str__(self) -> str:
        return self.reason


def locate_agent_cli(
    name: str, bin_root: Path, pins: agent_clis.Pins | None = None
) -> AgentCli | CliUnavailable:
    """The CLI pinned as ``name`` (in caliper's pins or a plugin's ``pins``), linked alone into
    ``bin_root``; or why it cannot be used.

    ``<NAME>_CLI_PATH`` (see :func:`caliper.testing.agent_clis.path_variable`) in the
    environment replaces the provisioned binary.
    """
    table = agent_clis.all_pins(pins)
    if name not in table:
        return CliUnavailable(
            "unknown",
            f"unknown agent CLI {name!r}; pinned: {', '.join(table)}. Declare its pin "
            "(package, version, bin, kind) in the conformance class's `cli_pins`.",
        )
    ok, why = loopback_only()
    if not ok:
        return CliUnavailable("offline", f"{SKIP_REASON} ({why})")
    entry = table[name]
    variable = agent_clis.path_variable(name, pins)
    override = os.environ.get(variable)
    if override:
        path = Path(override).expanduser()
        if not path.exists():
            return CliUnavailable("missing", f"{variable}={override} does not exist")
    else:
        # a CLI that runs on its private Node is started through the provisioning script's wrapper
        path = agent_clis.run_path(name, pins=pins)
        if not path.exists():
            return CliUnavailable(
                "missing",
                f"agent CLI {name} ({entry['package']} {entry['version']}) is not provisioned "
                f"at {path}; {agent_clis.install_advice(name, pins)}",
            )
    bin_root.mkdir(parents=True, exist_ok=True)
    link = bin_root / entry["bin"]
    if not link.exists():
        link.symlink_to(path)
    return AgentCli(name, path, bin_root)


def find_agent_cli(name: str, bin_root: Path) -> AgentCli | str:
    """The provisioned CLI ``name`` (linked alone into ``bin_root``), or why it is unusable."""
    found = locate_agent_cli(name, bin_root)
    return found.reason if isinstance(found, CliUnavailable) else found


def processes_mentioning(fragment: str, *, exclude: Sequence[int] = ()) -> list[str]:
    """Live processes whose command line or working directory contains ``fragment``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) in exclude or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        if stat.rsplit(")", 1)[-1].split()[0] == "Z":
            continue
        try:
            cwd = os.readlink(proc / "cwd")
        except OSError:
            cwd = ""
        if fragment in cmdline or fragment in cwd:
            found.append(f"pid {proc.name}: {cmdline.strip()[:200]} (cwd {cwd})")
    return found
