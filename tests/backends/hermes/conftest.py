"""Fixtures for the Hermes backend tests.

Live tests drive the real pinned Hermes (``.agent-clis/hermes``) against the scripted model
server, only inside a loopback-only network namespace:

    python -m caliper.testing.offline -- .venv/bin/pytest tests/backends/hermes -q
    unshare -n sh -c 'ip link set lo up; .venv/bin/pytest tests/backends/hermes -q'
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from hermes_support import PINNED_HERMES, PINNED_VERSION, FakeUser, loopback_only

from caliper.plugin.attempt import AttemptSandbox
from caliper.plugin.sandbox import make_sandbox, remove_sandbox
from caliper_backend_hermes.backend import HermesBackend


@pytest.fixture
def hermes_cli(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The pinned Hermes, exposed to the backend through ``HERMES_CLI_PATH``."""
    if not PINNED_HERMES.exists():
        pytest.skip(
            "hermes is not provisioned; run scripts/provision-agent-clis "
            f"(hermes-agent[mcp]=={PINNED_VERSION})"
        )
    if not loopback_only():
        pytest.skip(
            "live hermes tests run only in a loopback-only network namespace: "
            "`python -m caliper.testing.offline -- pytest tests/backends/hermes`"
        )
    monkeypatch.setenv("HERMES_CLI_PATH", str(PINNED_HERMES))
    return PINNED_HERMES


@pytest.fixture(autouse=True)
def _no_user_hermes_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tester's own ``HERMES_HOME`` must never be read by a test."""
    monkeypatch.delenv("HERMES_HOME", raising=False)


@pytest.fixture
def fake_user(tmp_path: Path) -> FakeUser:
    """An empty fake real home; tests configure its ``.hermes``."""
    home = tmp_path / "real-home"
    home.mkdir()
    return FakeUser(home)


@pytest.fixture
def sandbox(tmp_path: Path, fake_user: FakeUser) -> Iterator[AttemptSandbox]:
    """A real attempt sandbox whose "real home" is the fake user's."""
    made = make_sandbox(spec_dir=tmp_path, parent=tmp_path)
    yield attrs.evolve(made, real_home=fake_user.home)
    remove_sandbox(made)


@pytest.fixture
def backend() -> HermesBackend:
    return HermesBackend()
