"""The ``fake`` backend, skill installer and MCP translator (test-only).

The backend runs the ``fake-agent`` console script (``FAKE_AGENT_CLI_PATH`` overrides where it
is found) through ``caliper.system.process.run_process``, exactly like a real backend runs its CLI,
and reads its JSON-lines output into an :class:`AttemptResult`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

import caliper
from caliper.plugin.attempt import (
    AgentStatus,
    AttemptRequest,
    AttemptResult,
    AttemptSandbox,
    InstalledSkill,
    McpServerConfig,
    NativeMcpConfig,
    PromptRequest,
    PromptResult,
    Turn,
    Usage,
)
from caliper.plugin.backend import Backend, McpTranslator, SkillInstaller, copy_skill_tree
from caliper.plugin.skills import ResolvedSkill
from caliper.system.process import ProcessResult, run_process

SKILLS_DIR = (".fake-agent", "skills")
MCP_FILE = "fake-mcp.json"


class FakeBackend(Backend):
    """Drives the scripted ``fake-agent`` CLI."""

    id = "fake"
    aliases = ("fake-agent",)
    default_model = None
    cli_name = "fake-agent"
    install_hint = "uv sync (the fake agent ships with the caliper-fakeagent test package)"

    def supports_mcp(self) -> bool:
        """Yes: the spec's ``mcp:`` servers reach the agent."""
        return True

    def cli_version(self, path):  # type: ignore[no-untyped-def]
        return "0.1.0"

    def hides_model_disabled_skills(self) -> bool:
        """Hides ``disable-model-invocation`` skills when ``FAKE_HIDES_DISABLED=1``."""
        return os.environ.get("FAKE_HIDES_DISABLED") == "1"

    def claims_model(self, model: str) -> bool:
        return model.startswith("fake-")

    def check_mcp_servers(self, servers: Sequence[McpServerConfig], real_home) -> None:  # type: ignore[no-untyped-def]
        """Pre-flight: a server named ``unreachable-*`` stands for one that cannot be used."""
        from caliper.errors import SetupError

        for server in servers:
            if server.name.startswith("unreachable-"):
                resolved = "${" not in (server.url or "")
                raise SetupError(
                    f"MCP server {server.name!r} cannot be reached (pre-flight; "
                    f"references resolved: {resolved})."
                )

    def _argv(self, model: str | None, mcp: NativeMcpConfig | None) -> list[str]:
        path = self.find_cli()
        argv = [str(path) if path else self.cli_name]
        if model:
            argv += ["--model", model]
        if mcp is not None:
            argv += list(mcp.argv)
        return argv

    def run_attempt(self, request: AttemptRequest) -> AttemptResult:
        env = dict(request.sandbox.base_env)
        if request.mcp is not None:
            env.update(request.mcp.env)
        done = run_process(
            self._argv(request.model, request.mcp),
            env=env,
            cwd=request.sandbox.workdir,
            timeout=request.timeout,
            stdin_text=request.prompt,
        )
        return parse_output(done, installed=[s.name for s in request.skills])

    def run_prompt(self, request: PromptRequest) -> PromptResult:
        done = run_process(
            self._argv(request.model, None),
            env=dict(request.sandbox.base_env),
            cwd=request.sandbox.workdir,
            timeout=request.timeout,
            stdin_text=request.prompt,
        )
        result = parse_output(done, installed=[])
        return PromptResult(
            status=result.status,
            text=result.final_answer,
            model=result.model,
            usage=result.usage,
            error=result.error,
        )


def parse_output(done: ProcessResult, *, installed: Sequence[str]) -> AttemptResult:
    """Classify a fake-agent run from its JSON events (never from its words)."""
    if done.timed_out:
        return AttemptResult(
            status=AgentStatus.TIMEOUT,
            error="the fake agent timed out",
            duration_seconds=done.duration_seconds,
        )
    if done.interrupted:
        return AttemptResult(
            status=AgentStatus.INFRA_ERROR,
            error="interrupted",
            duration_seconds=done.duration_seconds,
        )
    transcript: list[Turn] = []
    activated: list[str] = []
    result: dict | None = None
    errors: list[dict] = []
    garbage = 0
    model = None
    for line in done.stdout.splitlines():
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            garbage += 1
            continue
        kind = event.get("type")
        if kind == "init":
            model = event.get("model")
        elif kind == "text":
            transcript.append(Turn(role="assistant", content=event.get("text")))
        elif kind == "tool":
            transcript.append(
                Turn(
                    role="tool",
                    tool_name=event.get("name"),
                    tool_input=event.get("input"),
                    tool_output=event.get("output"),
                    is_error=event.get("is_error"),
                )
            )
            if event.get("name") == "Skill" and not event.get("is_error"):
                name = (event.get("input") or {}).get("skill")
                if name in installed and name not in activated:
                    activated.append(name)
        elif kind == "error":
            errors.append(event)
        elif kind == "result":
            result = event
    observed = activated if installed else None
    common = {
        "transcript": transcript,
        "activated": observed,
        "exit_code": done.returncode,
        "duration_seconds": done.duration_seconds,
    }
    if result is None:
        if any(e.get("kind") == "auth" for e in errors):
            return AttemptResult(
                status=AgentStatus.SETUP_ERROR,
                model=model,
                error=f"fake agent: {errors[0].get('message')}",
                **common,
            )
        if errors:
            return AttemptResult(
                status=AgentStatus.INFRA_ERROR,
                model=model,
                error=f"fake agent: {errors[0].get('message')}",
                retry_after=errors[0].get("retry_after"),
                **common,
            )
        if done.returncode:
            return AttemptResult(
                status=AgentStatus.INFRA_ERROR,
                model=model,
                error=f"fake agent exited with status {done.returncode}: {done.stderr_tail(5)}",
                **common,
            )
        detail = f" ({garbage} unparseable lines)" if garbage else ""
        return AttemptResult(
            status=AgentStatus.INFRA_ERROR,
            model=model,
            error=f"fake agent produced no result{detail}",
            **common,
        )
    usage_data = result.get("usage") or {}
    usage = Usage(**usage_data) if usage_data else None
    status = AgentStatus.COMPLETED
    error = None
    if result.get("status") == "max_turns":
        status, error = AgentStatus.TASK_FAILED, "the agent hit its maximum number of turns"
    return AttemptResult(
        status=status,
        final_answer=result.get("text"),
        usage=usage,
        model=result.get("model") or model,
        error=error,
        **common,
    )


class FakeSkillInstaller(SkillInstaller):
    """Copies skills to ``<home>/.fake-agent/skills/<name>/``."""

    id = "fake"

    def install(
        self, skills: Sequence[ResolvedSkill], sandbox: AttemptSandbox
    ) -> list[InstalledSkill]:
        root = sandbox.home.joinpath(*SKILLS_DIR)
        installed = []
        for skill in skills:
            destination = root / skill.name
            copy_skill_tree(skill, destination)
            installed.append(InstalledSkill(skill.name, skill.description, destination))
        return installed


class FakeMcpTranslator(McpTranslator):
    """Writes the resolved servers to ``<private>/fake-mcp.json``, passed as ``--mcp-config``."""

    id = "fake"

    def translate(
        self, servers: Sequence[McpServerConfig], sandbox: AttemptSandbox
    ) -> NativeMcpConfig:
        data = {
            server.name: {
                "transport": server.transport,
                "command": server.command,
                "args": list(server.args),
                "env": dict(server.env),
                "url": server.url,
                "headers": dict(server.headers),
            }
            for server in servers
        }
        from caliper.plugin.private_files import write_secret_file

        path = write_secret_file(sandbox, MCP_FILE, json.dumps(data, indent=2))
        return NativeMcpConfig(argv=("--mcp-config", str(path)), data=data)


@caliper.hookimpl
def register_backends(register):  # type: ignore[no-untyped-def]
    register(FakeBackend())


@caliper.hookimpl
def register_skill_installers(register):  # type: ignore[no-untyped-def]
    register(FakeSkillInstaller())


@caliper.hookimpl
def register_mcp_translators(register):  # type: ignore[no-untyped-def]
    register(FakeMcpTranslator())
