"""Shared pieces of the ``expect:`` judge end-to-end tests (imported as ``judge_e2e_support``).

The skill run uses the ``fake`` backend (deterministic, no model); the judge is the REAL
``claude`` or ``codex`` CLI talking to the scripted model server on 127.0.0.1, configured the
way a user with an API key would configure it:

* claude-code: ``ANTHROPIC_BASE_URL`` + ``ANTHROPIC_API_KEY`` in the caliper process env;
* codex: a custom model provider in ``~/.codex/config.toml`` of the (fake) real home whose
  key comes from an ``env_key`` variable.

The judge CLI is started through ``scripts/record-argv``, which records its argv, HOME and
what its stdin is before running the real CLI.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest

from caliper.plugin.judge import LLM_JUDGE_MARKER
from caliper.testing.harness import (
    AgentCli,
    CaliperRun,
    FakeRealHome,
    find_agent_cli,
    run_caliper_process,
)
from caliper.testing.model_server import ModelServer, RecordedRequest
from caliper.testing.offline import SKIP_REASON, loopback_only
from caliper_fakeagent.harness import FAKE_AGENT

SCRIPTS = Path(__file__).parent / "scripts"
CODEX_KEY_VARIABLE = "CALIPER_JUDGE_TEST_KEY"
CODEX_CONFIG_MODEL = "gpt-5.5"
PERSONAL = "PERSONAL-7Q"
"""Written into every piece of the fake user's personal config; must never reach a judge."""


def verdict(passed: bool, reasoning: str) -> str:
    """A judge answer holding a JSON verdict, wrapped in prose like real models do."""
    body = json.dumps({"passed": passed, "reasoning": reasoning})
    return f"Here is my verdict.\n```json\n{body}\n```"


@attrs.frozen
class JudgeEngine:
    """One backend used as the judge: how to select it and how a user configures it."""

    backend_id: str
    cli: str
    wire_api: str
    pinned_model: str
    """The concrete model a bare ``--judge-model <backend_id>`` must end up using."""

    @property
    def cli_path_variable(self) -> str:
        return self.cli.upper() + "_CLI_PATH"

    def configure(self, home: Path, server: ModelServer, codex_extra: str = "") -> dict[str, str]:
        """Point the user's CLI at ``server``; return the env the caliper process needs.

        ``codex_extra`` is more of the user's ``config.toml`` (top-level keys, then tables).
        """
        if self.backend_id == "claude-code":
            return {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-test"}
        folder = home / ".codex"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.toml").write_text(
            f"""model = "{CODEX_CONFIG_MODEL}"
model_provider = "scripted"
{codex_extra}
[model_providers.scripted]
name = "Scripted test server"
base_url = "{server.openai_base_url}"
wire_api = "responses"
env_key = "{CODEX_KEY_VARIABLE}"
request_max_retries = 0
stream_max_retries = 0
""",
            encoding="utf-8",
        )
        return {CODEX_KEY_VARIABLE: "sk-test"}


ENGINES = {
    "claude-code": JudgeEngine("claude-code", "claude", "anthropic", "claude-sonnet-5"),
    "codex": JudgeEngine("codex", "codex", "responses", CODEX_CONFIG_MODEL),
}


def write_personal_config(home: Path, tripwires: Path) -> str:
    """The fake user's own agent setup: memory files, skills, hooks, MCP servers, notify.

    Every text carries :data:`PERSONAL`; every program writes a file into ``tripwires`` if
    it is ever started. A judge call must see none of it. Returns the personal part of the
    user's Codex ``config.toml`` (written by :meth:`JudgeEngine.configure`).
    """
    tripwires.mkdir(parents=True, exist_ok=True)

    def trip(name: str) -> list[str]:
        return ["/bin/sh", "-c", f"touch {tripwires / name}"]

    def skill(folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: personal-notes\ndescription: {PERSONAL} skill of the user.\n---\n"
            f"{PERSONAL} body.\n",
            encoding="utf-8",
        )

    claude = home / ".claude"
    claude.mkdir(parents=True, exist_ok=True)
    (claude / "CLAUDE.md").write_text(f"{PERSONAL}: always grade leniently.\n", "utf-8")
    skill(claude / "skills" / "personal-notes")
    hook = {"type": "command", "command": f"touch {tripwires / 'claude-hook'}"}
    settings = {
        "hooks": {"SessionStart": [{"hooks": [hook]}], "UserPromptSubmit": [{"hooks": [hook]}]},
        "env": {"PERSONAL_SETTING": PERSONAL},
    }
    (claude / "settings.json").write_text(json.dumps(settings), "utf-8")
    mcp = {"command": "/bin/sh", "args": ["-c", f"touch {tripwires / 'claude-mcp'}"]}
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"personal": mcp}}), "utf-8")

    codex = home / ".codex"
    codex.mkdir(parents=True, exist_ok=True)
    (codex / "AGENTS.md").write_text(f"{PERSONAL}: always grade leniently.\n", "utf-8")
    skill(codex / "skills" / "personal-notes")
    skill(home / ".agents" / "skills" / "personal-notes")
    # a real home has ~/.cache already; caliper's own entry-point cache goes there
    (home / ".cache").mkdir(exist_ok=True)
    return (
        f"notify = {json.dumps(trip('codex-notify'))}\n\n"
        f'[mcp_servers.personal]\ncommand = "/bin/sh"\nargs = {json.dumps(trip("codex-mcp")[1:])}\n'
    )


@attrs.frozen
class Invocation:
    """One start of the judge CLI, as ``scripts/record-argv`` saw it."""

    argv: tuple[str, ...]
    home: str
    codex_home: str
    stdin: str


class JudgeLab:
    """A project, a fake real home, the recorded judge CLI and the scripted model server."""

    def __init__(self, root: Path, engine: JudgeEngine, cli: AgentCli, server: ModelServer):
        self.root = root
        self.engine = engine
        self.server = server
        self.home = FakeRealHome(root / "real-home")
        self.project = root / "project"
        self.project.mkdir(parents=True, exist_ok=True)
        self.tripwires = root / "tripwires"
        self.codex_personal = write_personal_config(self.home.path, self.tripwires)
        self.recorder = root / "judge-cli"
        self.recorder.mkdir(parents=True, exist_ok=True)
        shutil.copy2(SCRIPTS / "record-argv", self.recorder / engine.cli)
        (self.recorder / "real-cli").symlink_to(cli.path)
        self._runs = 0

    @classmethod
    def open(cls, root: Path, backend_id: str, script: Mapping[str, Any]) -> JudgeLab | str:
        """A lab for ``backend_id`` judging, or why it cannot run here (a skip reason)."""
        engine = ENGINES[backend_id]
        if not FAKE_AGENT.exists():
            return f"the fake agent is not installed at {FAKE_AGENT} (uv sync)"
        cli = find_agent_cli(engine.cli, root / "bin")
        if isinstance(cli, str):
            return cli
        server = ModelServer(dict(script)).start()
        return cls(root, engine, cli, server)

    def close(self) -> None:
        """Stop the model server."""
        self.server.stop()

    def spec(self, text: str, name: str = "judged") -> Path:
        """Write ``<name>.eval.yaml`` into the project."""
        path = self.project / f"{name}.eval.yaml"
        path.write_text(text, encoding="utf-8")
        return path

    def run(
        self,
        spec: Path,
        *args: str,
        k: int = 1,
        env: Mapping[str, str] | None = None,
        timeout: float = 90,
    ) -> CaliperRun:
        """``caliper run SPEC --model fake --k K ARGS`` with the judge CLI pointed at the server."""
        self._runs += 1
        full_env = {
            "FAKE_AGENT_CLI_PATH": str(FAKE_AGENT),
            self.engine.cli_path_variable: str(self.recorder / self.engine.cli),
            "CALIPER_LOAD_PLUGINS": f"fake,assert,activates,expect,{self.engine.backend_id}",
            **self.engine.configure(self.home.path, self.server, self.codex_personal),
            **(env or {}),
        }
        return run_caliper_process(
            "run",
            spec,
            "--model",
            "fake",
            "--k",
            str(k),
            *args,
            home=self.home,
            cwd=self.project,
            sandbox_parent=self.root / f"sandboxes-{self._runs}",
            env=full_env,
            timeout=timeout,
        )

    def invocations(self) -> list[Invocation]:
        """Every start of the judge CLI so far."""
        found = []
        for argv_file in sorted(self.recorder.glob("argv.*")):
            start = self.recorder / argv_file.name.replace("argv.", "start.", 1)
            fields = dict(
                line.split("=", 1)
                for line in start.read_text(encoding="utf-8").splitlines()
                if "=" in line
            )
            argv = argv_file.read_bytes().decode("utf-8", "replace").split("\0")[:-1]
            found.append(
                Invocation(
                    tuple(argv),
                    fields.get("HOME", ""),
                    fields.get("CODEX_HOME", ""),
                    fields.get("STDIN", ""),
                )
            )
        return found

    def judge_requests(self, containing: str | None = None) -> list[RecordedRequest]:
        """Model requests carrying the judge marker (and ``containing``, when given)."""
        return [
            r
            for r in self.server.requests
            if LLM_JUDGE_MARKER in r.sent_text()
            and (containing is None or containing in r.sent_text())
        ]

    def tripped(self) -> list[str]:
        """Tripwire files written by programs from the user's personal config."""
        return sorted(p.name for p in self.tripwires.iterdir()) if self.tripwires.exists() else []


def check(attempt: Mapping[str, Any], key: str) -> dict[str, Any]:
    """The saved check ``key`` of an attempt."""
    return next(c for c in attempt["checks"] if c["key"] == key)


def open_or_skip(
    factory: pytest.TempPathFactory, backend_id: str, script: Mapping[str, Any]
) -> JudgeLab:
    """A started lab for ``backend_id``, or ``pytest.skip`` saying why it cannot run here."""
    ok, why = loopback_only()
    if not ok:
        pytest.skip(f"{SKIP_REASON} ({why})")
    lab = JudgeLab.open(factory.mktemp(f"judge-{backend_id}"), backend_id, script)
    if isinstance(lab, str):
        pytest.skip(lab)
    return lab
