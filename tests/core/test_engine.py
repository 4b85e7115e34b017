"""Engine resolution for --model / --judge-model."""

from __future__ import annotations

import types

import pytest

import caliper
from caliper.errors import PluginNotFound
from caliper.host.engine import resolve_engine
from caliper.host.plugins import PluginHost
from caliper.plugin.backend import Backend


class _Backend(Backend):
    cli_name = "nothing-here"

    def __init__(self, ident, aliases=(), prefixes=()):
        self.id = ident
        self.aliases = tuple(aliases)
        self.prefixes = tuple(prefixes)

    def claims_model(self, model):
        return model.startswith(self.prefixes) if self.prefixes else False

    def run_attempt(self, request):  # pragma: no cover
        raise AssertionError


def _host(*backends):
    module = types.ModuleType("engine_test_plugin")

    @caliper.hookimpl
    def register_backends(register):
        for backend in backends:
            register(backend)

    module.register_backends = register_backends
    return PluginHost([module], use_entry_points=False)


@pytest.fixture
def host():
    return _host(
        _Backend("claude-code", ["claude"], ["claude-"]),
        _Backend("codex", [], ["gpt-"]),
        _Backend("hermes"),
    )


@pytest.mark.parametrize(
    ("text", "backend", "model"),
    [
        (None, "claude-code", None),
        ("", "claude-code", None),
        ("claude", "claude-code", None),
        ("claude-code", "claude-code", None),
        ("codex", "codex", None),
        ("codex:gpt-5.5", "codex", "gpt-5.5"),
        ("hermes:openrouter/anthropic/claude:x", "hermes", "openrouter/anthropic/claude:x"),
        ("claude:claude-haiku-4-5", "claude-code", "claude-haiku-4-5"),
        ("gpt-5.5", "codex", "gpt-5.5"),
        ("claude-sonnet-5", "claude-code", "claude-sonnet-5"),
        ("some-unclaimed-model", "claude-code", "some-unclaimed-model"),
    ],
)
def test_engine_grammar(host, text, backend, model):
    engine = resolve_engine(host, text)
    assert (engine.backend_id, engine.model) == (backend, model)


def test_unknown_backend_says_what_was_asked_did_you_mean_and_what_is_installed(host):
    with pytest.raises(PluginNotFound) as info:
        resolve_engine(host, "codx:gpt-5", flag="--judge-model")
    message = info.value.render()
    assert "--judge-model 'codx:gpt-5'" in message
    assert "Did you mean 'codex'?" in message
    assert "claude-code [aliases: claude]" in message and "hermes" in message
    assert info.value.exit_code == 2


def test_known_but_missing_backend_gives_install_command(monkeypatch):
    from caliper.host import install_hints

    source = install_hints.InstallSource(
        "pipx", "1.0.0", "/p/bin/python", "/srv/dist", pipx_venv="caliper-eval"
    )
    monkeypatch.setattr(install_hints, "detect", lambda: source)
    host = _host(_Backend("claude-code", ["claude"]))
    with pytest.raises(PluginNotFound) as info:
        resolve_engine(host, "pi")
    assert info.value.hint == (
        "The pi backend is not installed. Install it with: "
        "pipx inject --pip-args='--find-links /srv/dist' caliper-eval caliper-backend-pi==1.0.0"
    )
    with pytest.raises(PluginNotFound) as info:
        resolve_engine(host, "codex:gpt-5.5")
    assert "caliper-backend-codex==1.0.0" in info.value.render()


@pytest.mark.parametrize("typo", ["codx", "hermez", "claud"])
def test_a_bare_name_one_typo_from_a_backend_is_not_taken_as_a_model(host, typo):
    """Regression: `--model codx` ran claude-code with model 'codx'."""
    with pytest.raises(PluginNotFound) as info:
        resolve_engine(host, typo)
    assert "Did you mean" in info.value.message
    assert f"claude-code:{typo}" in info.value.hint
