"""Helpers shared by the pi backend tests (fixtures live in conftest.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import attrs

from caliper.plugin.attempt import AttemptRequest, AttemptSandbox, InstalledSkill
from caliper.plugin.skills import ResolvedSkill
from caliper.testing import agent_clis, offline
from caliper_backend_pi import mcp
from caliper_backend_pi.skills import PiSkillInstaller

PI_UNDER_TEST = os.environ.get("CALIPER_TEST_PI_CLI")
"""Optional: one other pi build to run the live tests against instead of the pinned ones."""


@attrs.frozen
class PiUnderTest:
    """One pi the live tests run against: where to exec it and which version it should be."""

    key: str
    """Its entry in ``caliper.testing.agent_clis.AGENT_CLIS`` (``"custom"`` for an override)."""
    path: Path
    version: str | None
    """The pinned version (None for ``CALIPER_TEST_PI_CLI``, whose version is not known)."""

    @property
    def has_mcp(self) -> bool:
        return mcp.has_mcp(self.version)


def pinned_pi(key: str) -> PiUnderTest:
    """A pinned pi; one with a private Node runs through its ``.agent-clis/bin`` wrapper."""
    entry = agent_clis.AGENT_CLIS[key]
    path = agent_clis.bin_path(key)
    if entry.get("node"):
        path = agent_clis.shim_dir() / agent_clis.shim_name(key)
    return PiUnderTest(key, path, entry["version"])


PIS_UNDER_TEST = (
    [PiUnderTest("custom", Path(PI_UNDER_TEST), None)]
    if PI_UNDER_TEST
    else [pinned_pi("pi"), pinned_pi("pi-current")]
)
"""Both pinned release lines: 0.7x (system Node 20) and the current one (Node 24 from PyPI)."""
PROVIDER = "fake"
MODEL_ID = "fake-model"
MODEL = f"{PROVIDER}/{MODEL_ID}"
USER_MARKER = "USER-PRIVATE-MARKER-7f3a"
"""Text planted in the fake user's own pi resources; it must never reach the model."""


def loopback_only() -> bool:
    """True inside a network namespace whose only interface is ``lo``."""
    return offline.loopback_only()[0]


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def models_json(
    base_url: str, api_key: str = "sk-test", cost: dict[str, float] | None = None
) -> dict[str, Any]:
    """A custom provider pointing pi at the scripted server's Chat Completions endpoint
    (``cost``: the model's dollars per million tokens, pi's ``models.json`` field)."""
    model: dict[str, Any] = {"id": MODEL_ID, "contextWindow": 128000, "maxTokens": 4096}
    if cost is not None:
        model["cost"] = cost
    return {
        "providers": {
            PROVIDER: {
                "baseUrl": base_url,
                "api": "openai-completions",
                "apiKey": api_key,
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [model],
            }
        }
    }


@attrs.define
class FakeUser:
    """A fake real home with a pi agent dir full of things that must not leak."""

    home: Path

    @property
    def agent_dir(self) -> Path:
        return self.home / ".pi" / "agent"

    def configure(
        self,
        base_url: str,
        *,
        default: bool = True,
        cost: dict[str, float] | None = None,
        **settings: Any,
    ) -> None:
        write_json(self.agent_dir / "models.json", models_json(base_url, cost=cost))
        base: dict[str, Any] = {"retry": {"enabled": True, "maxRetries": 5}}
        if default:
            base.update(defaultProvider=PROVIDER, defaultModel=MODEL_ID)
        base.update(settings)
        write_json(self.agent_dir / "settings.json", base)
        write_json(self.agent_dir / "auth.json", {})

    def plant_private_resources(self) -> None:
        """User skills, an extension, a prompt template, system-prompt files and a session."""
        skill = self.agent_dir / "skills" / "user-private-skill" / "SKILL.md"
        skill.parent.mkdir(parents=True, exist_ok=True)
        skill.write_text(
            f"---\nname: user-private-skill\ndescription: {USER_MARKER} skill\n---\nbody\n",
            encoding="utf-8",
        )
        agents_skill = self.home / ".agents" / "skills" / "agents-private" / "SKILL.md"
        agents_skill.parent.mkdir(parents=True, exist_ok=True)
        agents_skill.write_text(
            f"---\nname: agents-private\ndescription: {USER_MARKER} agents skill\n---\nb\n",
            encoding="utf-8",
        )
        extension = self.agent_dir / "extensions" / "leak.ts"
        extension.parent.mkdir(parents=True, exist_ok=True)
        extension.write_text(
            "export default function (pi: any) {\n"
            "  pi.on('before_agent_start', async (event: any) => ({\n"
            f"    systemPrompt: event.systemPrompt + ' {USER_MARKER} extension'\n"
            "  }));\n}\n",
            encoding="utf-8",
        )
        prompt = self.agent_dir / "prompts" / "leak.md"
        prompt.parent.mkdir(parents=True, exist_ok=True)
        prompt.write_text(f"{USER_MARKER} prompt template\n", encoding="utf-8")
        (self.agent_dir / "AGENTS.md").write_text(f"{USER_MARKER} context\n", encoding="utf-8")
        (self.agent_dir / "APPEND_SYSTEM.md").write_text(f"{USER_MARKER} system\n")
        session = self.agent_dir / "sessions" / "--x--" / "s.jsonl"
        session.parent.mkdir(parents=True, exist_ok=True)
        session.write_text(json.dumps({"type": "session", "marker": USER_MARKER}) + "\n")

    def snapshot(self) -> dict[str, bytes]:
        """Every file under the fake home, to prove an attempt changed nothing there."""
        return {
            str(p.relative_to(self.home)): p.read_bytes()
            for p in sorted(self.home.rglob("*"))
            if p.is_file()
        }


def make_skill(root: Path, name: str, description: str, extra: dict[str, str] | None = None):
    """A skill folder on disk, as the spec loader would resolve it."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n# {name}\nSay {name.upper()}.\n",
        encoding="utf-8",
    )
    for file_name, text in (extra or {}).items():
        (folder / file_name).write_text(text, encoding="utf-8")
    return ResolvedSkill(name=name, description=description, source_dir=folder)


def install(sandbox: AttemptSandbox, skills: list[ResolvedSkill]) -> list[InstalledSkill]:
    return PiSkillInstaller().install(skills, sandbox)


def request(
    sandbox: AttemptSandbox,
    prompt: str = "Say hello to Ada.",
    *,
    model: str | None = MODEL,
    skills: list[InstalledSkill] | None = None,
    timeout: float = 60.0,
) -> AttemptRequest:
    return AttemptRequest(
        prompt=prompt, model=model, sandbox=sandbox, timeout=timeout, skills=tuple(skills or ())
    )
