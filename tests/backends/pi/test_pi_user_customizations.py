"""``--user-customizations`` on the real pi CLI (both pinned lines, scripted model server): the
user's global skills reach the model only when asked and are recorded by name; the global
``AGENTS.md`` is reported as not loaded (pi's ``--no-context-files``); extensions, prompt
templates, system-prompt files and sessions never come along."""

from __future__ import annotations

import attrs
import pytest
from pi_support import USER_MARKER, install, request

from caliper.plugin.attempt import AgentStatus
from caliper.testing.model_server import ModelServer

pytestmark = pytest.mark.e2e


def test_user_skills_and_rules_only_on_request(pi_cli, backend, fake_user, sandbox, neighbourhood):
    with ModelServer({"turns": [{"text": "ok"}]}) as server:
        fake_user.configure(server.openai_base_url)
        fake_user.plant_private_resources()
        before = fake_user.snapshot()
        skills = install(sandbox, neighbourhood)
        result = backend.run_attempt(
            attrs.evolve(request(sandbox, skills=skills), user_customizations=True)
        )
    assert result.status is AgentStatus.COMPLETED, result.error
    sent = server.all_sent_text()
    assert f"{USER_MARKER} skill" in sent and f"{USER_MARKER} agents skill" in sent
    for kept_out in ("extension", "system", "prompt template", "context"):
        assert f"{USER_MARKER} {kept_out}" not in sent, kept_out
    assert '"marker": "' + USER_MARKER not in sent  # no session
    assert "hello-skill" in sent  # the declared neighbourhood is still there
    setup = result.user_setup
    assert setup is not None
    assert setup.skills == ("user-private-skill", "agents-private")
    assert setup.rules == ()
    assert any("global AGENTS.md is not loaded" in note for note in setup.not_loaded)
    assert any("extensions" in note for note in setup.not_loaded)
    assert fake_user.snapshot() == before


def test_without_the_flag_nothing_of_the_user_comes_along(pi_cli, backend, fake_user, sandbox):
    with ModelServer({"turns": [{"text": "ok"}]}) as server:
        fake_user.configure(server.openai_base_url)
        fake_user.plant_private_resources()
        result = backend.run_attempt(request(sandbox))
    assert result.status is AgentStatus.COMPLETED, result.error
    assert USER_MARKER not in server.all_sent_text()
    assert result.user_setup is None
