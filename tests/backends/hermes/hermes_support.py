"""Helpers for the Hermes backend tests: the pinned CLI, a fake user, and one-call attempts."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from caliper.plugin.attempt import AttemptRequest, AttemptResult, AttemptSandbox, NativeMcpConfig
from caliper.plugin.skills import ResolvedSkill
from caliper.testing.agent_clis import AGENT_CLIS, bin_path
from caliper.testing.model_server import ModelServer
from caliper.testing.offline import loopback_only as _loopback_only
from caliper_backend_hermes.backend import HermesBackend
from caliper_backend_hermes.skills import HermesSkillInstaller

PINNED_HERMES = bin_path("hermes")
PINNED_VERSION = AGENT_CLIS["hermes"]["version"]
AUX_RULE = {"when": {"no_tools": True}, "text": "Approved."}
"""Hermes sends side calls (approval checks, titles) without tools; answer them aside."""


def loopback_only() -> bool:
    """Whether this process sits in a loopback-only network namespace."""
    return _loopback_only()[0]


def script(*turns: Mapping[str, Any], rules: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """A model-server script: the given ordered turns, plus the rule for Hermes' side calls."""
    return {"rules": [*rules, AUX_RULE], "turns": list(turns)}


@attrs.define
class FakeUser:
    """A fake "real home" holding a Hermes setup, personal files included."""

    home: Path

    @property
    def hermes(self) -> Path:
        return self.home / ".hermes"

    def configure(
        self,
        server: ModelServer | None,
        *,
        model: str | None = "caliper-test-model",
        base_url: str | None = None,
        extra: str = "",
    ) -> None:
        """Write a config.yaml pointing Hermes at ``server`` (a custom OpenAI endpoint)."""
        self.hermes.mkdir(parents=True, exist_ok=True)
        url = base_url or (server.openai_base_url if server else "http://127.0.0.1:9/v1")
        lines = [
            "model:",
            "  provider: custom",
            f"  base_url: {url}",
            "  api_key: sk-test-key",
            "  context_length: 128000",
        ]
        if model:
            lines.append(f"  default: {model}")
        lines += ["agent:", "  environment_probe: false", "  api_max_retries: 5"]
        lines += ["security:", "  allow_lazy_installs: true"]
        lines += ["memory:", "  memory_enabled: true", "  user_profile_enabled: true"]
        (self.hermes / "config.yaml").write_text("\n".join(lines) + "\n" + extra)

    def write_config(self, text: str) -> None:
        self.hermes.mkdir(parents=True, exist_ok=True)
        (self.hermes / "config.yaml").write_text(textwrap.dedent(text))

    def add_personal_state(self) -> None:
        """Persona, memories, a personal skill and a past session: none may reach an attempt."""
        self.hermes.mkdir(parents=True, exist_ok=True)
        (self.hermes / "SOUL.md").write_text("You are SOUL-MARKER-7, a pirate.\n")
        memories = self.hermes / "memories"
        memories.mkdir(exist_ok=True)
        (memories / "MEMORY.md").write_text("MEMORY-MARKER-7: the user likes tabs.\n")
        (memories / "USER.md").write_text("USER-MARKER-7: the user is called Ada.\n")
        personal = self.hermes / "skills" / "personal" / "secret-skill"
        personal.mkdir(parents=True, exist_ok=True)
        (personal / "SKILL.md").write_text(
            "---\nname: secret-skill\ndescription: PERSONAL-SKILL-MARKER-7 skill.\n---\nBody\n"
        )
        (self.hermes / ".env").write_text("SOME_PROVIDER_API_KEY=from-dotenv\n")
        (self.hermes / "auth.json").write_text('{"providers": {}}\n')


def make_skill(
    root: Path, name: str, description: str, files: Mapping[str, str] | None = None
) -> ResolvedSkill:
    """A skill folder on disk and its resolved form."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n# {name}\nSay {name.upper()}-BODY.\n"
    )
    for rel, text in (files or {}).items():
        (folder / rel).write_text(text)
    return ResolvedSkill(name=name, description=description, source_dir=folder)


def run_attempt(
    backend: HermesBackend,
    sandbox: AttemptSandbox,
    prompt: str,
    *,
    skills: Sequence[ResolvedSkill] = (),
    model: str | None = None,
    timeout: float = 90.0,
    mcp: NativeMcpConfig | None = None,
) -> AttemptResult:
    """Install ``skills`` like the runner does, then run one attempt."""
    installed = HermesSkillInstaller().install(skills, sandbox)
    request = AttemptRequest(
        prompt=prompt, model=model, sandbox=sandbox, timeout=timeout, skills=installed, mcp=mcp
    )
    return backend.run_attempt(request)
