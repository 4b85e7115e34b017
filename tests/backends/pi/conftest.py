"""Fixtures for the pi backend tests: the pinned pi, a fake user, and attempt sandboxes.

Live tests drive the real pi CLI (provisioned under ``.agent-clis/npm``) against the scripted
model server, and only inside a loopback-only network namespace:

    python -m caliper.testing.offline -- .venv/bin/pytest tests/backends/pi -q
    unshare -n sh -c 'ip link set lo up; .venv/bin/pytest tests/backends/pi -q'
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from pi_support import (
    PINNED_PI,
    PINNED_VERSION,
    FakeUser,
    loopback_only,
    make_skill,
)

from caliper.attempt import AttemptSandbox
from caliper.sandbox import make_sandbox, remove_sandbox
from caliper.skills import ResolvedSkill
from caliper.testing import offline
from caliper_backend_pi.backend import PiBackend


@pytest.fixture
def pi_cli(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The pinned pi binary, exposed to the backend through ``PI_CLI_PATH``."""
    if not PINNED_PI.exists():
        pytest.skip(f"pi {PINNED_VERSION} is not provisioned; run scripts/provision-agent-clis")
    if not loopback_only():
        pytest.skip(offline.SKIP_REASON)
    monkeypatch.setenv("PI_CLI_PATH", str(PINNED_PI))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    return PINNED_PI


@pytest.fixture
def fake_user(tmp_path: Path) -> FakeUser:
    """An empty fake "real home" for the user whose pi setup attempts are seeded from."""
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
def neighbourhood(tmp_path: Path) -> list[ResolvedSkill]:
    """Two resolved skills: hello-skill and other-skill (which has a reference file)."""
    root = tmp_path / "skill-sources"
    return [
        make_skill(root, "hello-skill", "Greets people. Use when asked for a greeting."),
        make_skill(
            root,
            "other-skill",
            "Formats tables. Use when asked for a table.",
            {"reference.md": "other reference\n"},
        ),
    ]


@pytest.fixture
def backend() -> PiBackend:
    """A fresh pi backend object."""
    return PiBackend()
