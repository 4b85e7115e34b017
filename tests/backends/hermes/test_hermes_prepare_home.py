"""Hermes seeds the attempt's ``HERMES_HOME`` in ``prepare_home`` (which the runner may call
ahead): the run then writes only its config.yaml and version stamp, and the home holds the
same files either way."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest
from hermes_support import FakeUser

from caliper.plugin.attempt import AttemptSandbox
from caliper.plugin.sandbox import make_sandbox, remove_sandbox
from caliper.runner.attempt.environment import seed_ahead
from caliper_backend_hermes import backend as hermes_backend
from caliper_backend_hermes.backend import HermesBackend, SeededHermesHome
from caliper_backend_hermes.home import load_user_setup, user_hermes_home
from caliper_backend_hermes.skills import hermes_home


def tree(sandbox: AttemptSandbox) -> dict[str, object]:
    """Every file under the sandbox home, its own root path written as ``ROOT`` (the version
    stamp without its time)."""
    root = str(sandbox.root).encode()
    files: dict[str, object] = {}
    for path in sorted(sandbox.home.rglob("*")):
        name = str(path.relative_to(sandbox.home))
        if path.name == ".update_check":
            files[name] = {k: v for k, v in json.loads(path.read_text()).items() if k != "ts"}
        elif path.is_file():
            files[name] = path.read_bytes().replace(root, b"ROOT")
        else:
            files[name] = "folder"
    return files


def sandbox_of(tmp_path: Path, user: FakeUser, name: str) -> AttemptSandbox:
    (tmp_path / name).mkdir()
    made = make_sandbox(spec_dir=tmp_path, parent=tmp_path / name)
    return attrs.evolve(made, real_home=user.home)


@pytest.mark.parametrize("attempt", [True, False])
def test_the_home_is_the_same_whether_seeded_ahead_or_not(
    tmp_path: Path, fake_user: FakeUser, monkeypatch: pytest.MonkeyPatch, attempt: bool
) -> None:
    fake_user.configure(None)
    fake_user.add_personal_state()
    monkeypatch.setattr(hermes_backend, "installed_version", lambda cli: "0.19.0")
    backend = HermesBackend()
    now = sandbox_of(tmp_path, fake_user, "now")
    ahead = seed_ahead(backend, sandbox_of(tmp_path, fake_user, "ahead"))
    assert isinstance(ahead.seeded.state, SeededHermesHome)
    assert set(tree(ahead)) == {
        ".hermes",
        ".hermes/.env",
        ".hermes/auth.json",
        ".hermes/.no-bundled-skills",
        ".hermes/skills",
    }
    servers = {"echo": {"command": "echo", "env": {"K": "${CALIPER_MCP_SECRET_K}"}}}
    envs = []
    for box in (now, ahead):
        if attempt:
            load_user_setup(hermes_home(box), user_hermes_home(box.real_home))
        home, env = backend._prepare(Path("/opt/hermes"), box, servers if attempt else None)
        assert home == hermes_home(box)
        envs.append({name: value.replace(str(box.root), "ROOT") for name, value in env.items()})
    assert tree(now) == tree(ahead)
    assert tree(now)[".hermes/.update_check"] == {"behind": 0, "rev": None, "ver": "0.19.0"}
    assert (".hermes/skills/personal/secret-skill/SKILL.md" in tree(now)) is attempt
    assert envs[0] == envs[1]
    for box in (now, ahead):
        remove_sandbox(box)
