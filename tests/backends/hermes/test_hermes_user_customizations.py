"""``--user-customizations`` on the real Hermes CLI (scripted model server): the user's own
skills reach the model only when asked and are recorded by name; persona, memories, rules and
sessions never come along, and the run says what was not loaded."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from hermes_support import FakeUser, make_skill, script

from caliper.plugin.attempt import AgentStatus, AttemptRequest, AttemptSandbox
from caliper.testing.model_server import ModelServer
from caliper_backend_hermes.backend import HermesBackend
from caliper_backend_hermes.skills import HermesSkillInstaller

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("hermes_cli")]


def _attempt(backend, sandbox, tmp_path, *, user_customizations: bool):
    skills = [make_skill(tmp_path / "src", "hello-skill", "Greets people.")]
    installed = HermesSkillInstaller().install(skills, sandbox)
    request = AttemptRequest(prompt="Say ok", model=None, sandbox=sandbox, timeout=90.0)
    request = attrs.evolve(request, skills=installed, user_customizations=user_customizations)
    return backend.run_attempt(request)


@pytest.mark.parametrize("loaded", [False, True], ids=["isolated", "user-customizations"])
def test_personal_skills_only_on_request(
    backend: HermesBackend,
    sandbox: AttemptSandbox,
    fake_user: FakeUser,
    tmp_path: Path,
    loaded: bool,
) -> None:
    with ModelServer(script({"text": "ok"})) as server:
        fake_user.configure(server)
        fake_user.add_personal_state()
        result = _attempt(backend, sandbox, tmp_path, user_customizations=loaded)
        sent = server.all_sent_text()
    assert result.status is AgentStatus.COMPLETED, result.error
    assert ("PERSONAL-SKILL-MARKER-7" in sent) is loaded
    for marker in ("SOUL-MARKER-7", "MEMORY-MARKER-7", "USER-MARKER-7"):
        assert marker not in sent, marker
    assert "hello-skill" in sent
    if loaded:
        assert result.user_setup is not None
        assert result.user_setup.skills == ("secret-skill",)
        assert any("SOUL.md" in note for note in result.user_setup.not_loaded)
    else:
        assert result.user_setup is None
    assert (fake_user.hermes / "SOUL.md").read_text() == "You are SOUL-MARKER-7, a pirate.\n"
