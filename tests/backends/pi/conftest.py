"""Fixtures for the pi backend tests: the pinned pi, a fake user, and attempt sandboxes.

Live tests drive the real pi CLIs (both pinned release lines, provisioned under
``.agent-clis/``) against the scripted model server, only inside a loopback-only network
namespace:

    python -m caliper.testing.offline -- .venv/bin/pytest tests/backends/pi -q
    unshare -n sh -c 'ip link set lo up; .venv/bin/pytest tests/backends/pi -q'
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from pi_support import (
    PIS_UNDER_TEST,
    FakeUser,
    PiUnderTest,
    loopback_only,
    make_skill,
)

from caliper.plugin.attempt import AttemptSandbox
from caliper.plugin.sandbox import make_sandbox, remove_sandbox
from caliper.plugin.skills import ResolvedSkill
from caliper.testing import agent_clis, offline
from caliper_backend_pi.backend import PiBackend


@pytest.fixture(params=PIS_UNDER_TEST, ids=lambda pi: f"{pi.key}-{pi.version or 'any'}")
def pi(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> PiUnderTest:
    """Each pi under test in turn, exposed to the backend through ``PI_CLI_PATH``."""
    found: PiUnderTest = request.param
    if not found.path.exists():
        pytest.skip(
            f"pi {found.version} ({found.key}) is not provisioned at {found.path}; run "
            f"{agent_clis.INSTALL_COMMAND} --only {found.key}"
        )
    if not loopback_only():
        pytest.skip(offline.SKIP_REASON)
    monkeypatch.setenv("PI_CLI_PATH", str(found.path))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    return found


@pytest.fixture
def pi_cli(pi: PiUnderTest) -> Path:
    """The executable of the pi under test (parametrized over both pinned versions)."""
    return pi.path


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
