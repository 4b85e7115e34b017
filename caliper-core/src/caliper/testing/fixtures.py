"""pytest fixtures for testing caliper backends end to end (opt-in plugin).

Enable in a test module or conftest::

    pytest_plugins = ["caliper.testing.fixtures"]

Fixtures:

* ``model_server`` — factory: ``model_server(script) -> ModelServer`` (started; stopped at
  teardown).
* ``fake_real_home`` — a :class:`FakeRealHome`: an empty temp folder used as the caliper
  process's HOME, with snapshots to prove attempts never write to it.
* ``agent_cli`` — factory: ``agent_cli("claude", pins=None) -> AgentCli`` for a provisioned
  CLI; fails for a name no pin declares, skips when the CLI is not provisioned or the test is
  not in a loopback-only network namespace. A test that uses it must be marked
  ``@pytest.mark.e2e`` (this plugin registers the marker); an unmarked one fails at once. With
  ``caliper.testing.e2e_policy`` enabled and ``CALIPER_REQUIRE_E2E=1``, the skips become
  failures too.
* ``run_caliper`` — factory: runs the real ``caliper`` console script as a subprocess and
  returns a :class:`CaliperRun` (exit code, output, parsed results JSON, real-home changes).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from caliper.testing.harness import (
    AgentCli,
    CaliperRun,
    CliUnavailable,
    FakeRealHome,
    locate_agent_cli,
    run_caliper_process,
)
from caliper.testing.model_server import ModelServer
from caliper.testing.script import Script

__all__ = ["agent_cli", "fake_real_home", "model_server", "run_caliper"]


@pytest.fixture
def model_server() -> Iterator[Callable[..., ModelServer]]:
    """Factory: ``model_server(script, **kwargs)`` starts a server; all stop at teardown."""
    started: list[ModelServer] = []

    def start(script: Script | Mapping[str, Any] | str | Path, **kwargs: Any) -> ModelServer:
        server = ModelServer(script, **kwargs).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def fake_real_home(tmp_path: Path) -> FakeRealHome:
    """An empty temp folder standing in for the user's real home."""
    return FakeRealHome(tmp_path / "real-home")


E2E_MARKER = "e2e"


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``e2e`` marker (``--strict-markers`` suites need it registered)."""
    config.addinivalue_line("markers", f"{E2E_MARKER}: drives a real agent CLI")


@pytest.fixture
def agent_cli(tmp_path: Path, request: pytest.FixtureRequest) -> Callable[..., AgentCli]:
    """Factory: ``agent_cli("codex", pins=None)`` → the provisioned CLI.

    Fails a test that is not marked ``@pytest.mark.e2e``: a real-CLI test must be selectable
    (``-m e2e``) and must not skip unnoticed in CI. ``pins`` adds a plugin's own pins
    (``CLI_PINS``, see :mod:`caliper.testing.agent_clis`). A name no pin declares fails the
    test; an unprovisioned CLI or a test outside the loopback-only namespace skips, saying why.
    """
    if request.node.get_closest_marker(E2E_MARKER) is None:
        pytest.fail(
            f"{request.node.nodeid} uses the agent_cli fixture (a real agent CLI) but is not "
            f"marked @pytest.mark.{E2E_MARKER}; mark the test, its class or its module "
            f"(pytestmark = pytest.mark.{E2E_MARKER}).",
            pytrace=False,
        )

    def get(name: str, pins: Mapping[str, Mapping[str, Any]] | None = None) -> AgentCli:
        found = locate_agent_cli(name, tmp_path / f"cli-{name}", pins)
        if isinstance(found, CliUnavailable):
            if found.kind == "unknown":
                pytest.fail(found.reason, pytrace=False)
            pytest.skip(found.reason)
        return found

    return get


@pytest.fixture
def run_caliper(tmp_path: Path, fake_real_home: FakeRealHome) -> Callable[..., CaliperRun]:
    """Factory: ``run_caliper(*args, cwd=, env=, home=, path=, timeout=)`` → CaliperRun.

    Defaults: ``cwd`` a fresh project folder, ``home`` the ``fake_real_home`` fixture, and a
    fresh sandbox parent per call.
    """
    counter = iter(range(1_000_000))

    def run(
        *args: str | os.PathLike[str],
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        home: FakeRealHome | Path | None = None,
        path: str | None = None,
        timeout: float = 300,
        sandbox_parent: Path | None = None,
    ) -> CaliperRun:
        n = next(counter)
        project = cwd or tmp_path / "project"
        project.mkdir(parents=True, exist_ok=True)
        return run_caliper_process(
            *args,
            home=home or fake_real_home,
            cwd=project,
            sandbox_parent=sandbox_parent or tmp_path / f"sandboxes-{n}",
            env=env,
            path=path,
            timeout=timeout,
        )

    return run
