"""pi seeds the attempt's agent dir in ``prepare_home`` (which the runner may call ahead): the
run then adds only its MCP servers, and the home holds the same files either way."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from pi_support import FakeUser

from caliper.errors import SetupError
from caliper.plugin.attempt import AttemptSandbox, NativeMcpConfig
from caliper.plugin.sandbox import make_sandbox, remove_sandbox
from caliper.runner.attempt.environment import seed_ahead
from caliper_backend_pi.backend import PiBackend, SeededAgentDir
from caliper_backend_pi.home import load_user_setup


def tree(sandbox: AttemptSandbox) -> dict[str, bytes]:
    """Every file under the sandbox home, its own root path written as ``ROOT``."""
    root = str(sandbox.root).encode()
    return {
        str(path.relative_to(sandbox.home)): path.read_bytes().replace(root, b"ROOT")
        for path in sorted(sandbox.home.rglob("*"))
        if path.is_file()
    }


def sandbox_of(tmp_path: Path, user: FakeUser, name: str) -> AttemptSandbox:
    (tmp_path / name).mkdir()
    made = make_sandbox(spec_dir=tmp_path, parent=tmp_path / name)
    return attrs.evolve(made, real_home=user.home)


@pytest.fixture
def user(fake_user: FakeUser, monkeypatch: pytest.MonkeyPatch) -> FakeUser:
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    fake_user.configure("http://127.0.0.1:9/v1")
    fake_user.plant_private_resources()
    return fake_user


@pytest.mark.parametrize("attempt", [True, False])
def test_the_agent_dir_is_the_same_whether_seeded_ahead_or_not(
    tmp_path: Path, user: FakeUser, attempt: bool
) -> None:
    backend = PiBackend()
    now = sandbox_of(tmp_path, user, "now")
    ahead = seed_ahead(backend, sandbox_of(tmp_path, user, "ahead"))
    assert isinstance(ahead.seeded.state, SeededAgentDir)
    seeded = tree(ahead)
    assert {".pi/agent/auth.json", ".pi/agent/models.json", ".pi/agent/settings.json"} <= set(
        seeded
    )
    native = NativeMcpConfig(data={"mcpServers": {"echo": {"command": "echo"}}}, env={"K": "v"})
    envs = []
    for box in (now, ahead):
        if attempt:
            load_user_setup(box)
        envs.append(backend._prepare(box, None, native if attempt else None))
    assert tree(now) == tree(ahead)
    assert (".pi/agent/mcp.json" in tree(now)) is attempt
    assert envs[0]["PI_CODING_AGENT_DIR"] == str(now.home / ".pi" / "agent")
    rooted = [
        {name: value.replace(str(box.root), "ROOT") for name, value in env.items()}
        for box, env in zip((now, ahead), envs, strict=True)
    ]
    assert rooted[0] == rooted[1]
    for box in (now, ahead):
        remove_sandbox(box)


def test_no_default_model_is_still_refused_by_the_run(tmp_path: Path, fake_user: FakeUser) -> None:
    fake_user.configure("http://127.0.0.1:9/v1", default=False)
    backend = PiBackend()
    box = seed_ahead(backend, sandbox_of(tmp_path, fake_user, "box"))
    with pytest.raises(SetupError, match="no default model"):
        backend._prepare(box, None)
    assert backend._prepare(box, "fake/fake-model")["PI_OFFLINE"]
    remove_sandbox(box)
