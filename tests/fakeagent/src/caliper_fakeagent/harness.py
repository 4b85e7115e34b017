"""Helpers for tests that drive ``caliper run`` as a real subprocess with the fake backend."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import attrs

BIN = Path(sys.executable).parent
CALIPER = BIN / "caliper"
FAKE_AGENT = BIN / "fake-agent"
PLUGINS = "fake,assert,activates,expect"


@attrs.frozen
class CaliperRun:
    """A finished ``caliper`` process and, when one was saved, its results JSON."""

    returncode: int
    stdout: str
    stderr: str
    results_path: Path | None

    @property
    def results(self) -> dict[str, Any]:
        assert self.results_path is not None, f"no results saved\n{self.stderr}"
        return json.loads(self.results_path.read_text(encoding="utf-8"))

    def attempts(self, task: str) -> list[dict[str, Any]]:
        """The saved attempts of the task called ``task``."""
        for entry in self.results["tasks"]:
            if entry["name"] == task:
                return entry["attempts"]
        raise KeyError(task)

    def task(self, name: str) -> dict[str, Any]:
        return next(t for t in self.results["tasks"] if t["name"] == name)


@attrs.frozen
class Workspace:
    """A temp project: a spec folder, a fake real HOME and a sandbox parent folder."""

    root: Path

    @property
    def home(self) -> Path:
        return self.root / "real-home"

    @property
    def sandboxes(self) -> Path:
        return self.root / "sandboxes"

    @classmethod
    def create(cls, root: Path) -> Workspace:
        space = cls(root)
        space.home.mkdir(parents=True, exist_ok=True)
        space.sandboxes.mkdir(parents=True, exist_ok=True)
        return space

    def skill(self, name: str, description: str = "", body: str = "Do the thing.") -> Path:
        """Write ``skills/<name>/SKILL.md`` and return its folder."""
        folder = self.root / "skills" / name
        folder.mkdir(parents=True, exist_ok=True)
        text = f"---\nname: {name}\ndescription: {description or 'Helps with ' + name}.\n---\n"
        (folder / "SKILL.md").write_text(text + body + "\n", encoding="utf-8")
        return folder

    def spec(self, text: str, name: str = "demo") -> Path:
        """Write ``<name>.eval.yaml`` (dedented) and return its path."""
        path = self.root / f"{name}.eval.yaml"
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    def env(self, **extra: str) -> dict[str, str]:
        """The environment for ``caliper``: fake HOME, sandbox parent, the fake agent's path."""
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(self.home),
            "CALIPER_TMPDIR": str(self.sandboxes),
            "FAKE_AGENT_CLI_PATH": str(FAKE_AGENT),
            "CALIPER_LOAD_PLUGINS": PLUGINS,
            "CALIPER_TEST_PLUGINS": "1",  # the fake backend is in the test-only groups
            "LANG": "C.UTF-8",
        }
        env.update(extra)
        return env

    def start(
        self, spec: Path, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[str]:
        """Start ``caliper run SPEC --model fake ARGS`` without waiting."""
        return subprocess.Popen(
            [str(CALIPER), "run", str(spec), "--model", "fake", *args],
            cwd=self.root,
            env=env or self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def finish(self, process: subprocess.Popen[str], timeout: float = 60) -> CaliperRun:
        """Wait for a started run and collect its output and results file."""
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            raise AssertionError(f"caliper did not finish in {timeout}s\n{stderr}") from None
        return CaliperRun(process.returncode, stdout, stderr, self.latest_results())

    def run(
        self, spec: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60
    ) -> CaliperRun:
        """Run ``caliper run SPEC --model fake ARGS`` to completion."""
        return self.finish(self.start(spec, *args, env=env), timeout=timeout)

    def files_in_real_home(self) -> list[str]:
        """Files under the fake real HOME, ignoring stevedore's entry-point cache (written by
        the caliper process itself when it loads plugins, never by an attempt)."""
        return sorted(
            str(p.relative_to(self.home))
            for p in self.home.rglob("*")
            if p.is_file() and ".cache/python-entrypoints" not in str(p)
        )

    def latest_results(self) -> Path | None:
        found = sorted(
            (self.root / ".caliper" / "results").glob("*/*.json"), key=lambda p: p.stat().st_mtime
        )
        return found[-1] if found else None


def pid_alive(pid: int) -> bool:
    """Whether a process with ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"
