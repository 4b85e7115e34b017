"""The opencode backend, its skill installer and its MCP translator."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from caliper.plugin import SetupError, UsageError, run_process
from caliper.plugin.agent_ending import AgentEnding, stopped_early
from caliper.plugin.attempt import (
    AttemptRequest,
    AttemptResult,
    AttemptSandbox,
    McpServerConfig,
    NativeMcpConfig,
    PromptRequest,
    PromptResult,
)
from caliper.plugin.backend import Backend, FolderSkillInstaller, McpTranslator, run_agent
from caliper.plugin.mcp import EnvReferences, SecretSet
from caliper_backend_opencode.config import (
    REFERENCE,
    attempt_env,
    copy_login,
    mcp_block,
    read_user_config,
    write_config,
)
from caliper_backend_opencode.events import read_attempt

MCP_CHECK_TIMEOUT = 60.0
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class OpencodeBackend(Backend):
    """Runs attempts through ``opencode run --format json``."""

    id = "opencode"
    cli_name = "opencode"  # OPENCODE_CLI_PATH overrides where it is found
    install_hint = "npm install -g opencode-ai"

    def supports_mcp(self) -> bool:
        """Yes: the spec's ``mcp:`` servers reach the agent."""
        return True

    def cli_version(self, path: Path) -> str | None:
        """The version in the npm package beside the binary (the CLI is not started)."""
        manifest = path.resolve().parent.parent / "package.json"
        try:
            return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])
        except (OSError, ValueError, KeyError):
            return None

    def check_ready(self, model: str | None, real_home: Path) -> None:
        """opencode names models ``provider/model``; without one it needs a default."""
        if model is not None and "/" not in model:
            raise UsageError(
                f"--model opencode:{model}: opencode models are written provider/model.",
                hint="For example --model opencode:anthropic/claude-sonnet-4-5.",
            )
        if model is None and "model" not in read_user_config(real_home):
            raise SetupError(
                "opencode has no default model: your opencode.json sets no `model`.",
                hint="Pass --model opencode:<provider>/<model>, or set `model` in opencode.json.",
            )

    def mcp_tool_name(self, server: str, tool: str) -> str:
        """opencode names MCP tools ``<server>_<tool>``."""
        return f"{server}_{tool}"

    def tool_vocabulary(self) -> Mapping[str, Sequence[str]]:
        """opencode's own tools: ``bash``, ``read``, ``write``, ``edit``, ``skill``."""
        return {
            "shell": ("bash",),
            "read": ("read",),
            "write": ("write",),
            "edit": ("edit",),
            "skill": ("skill",),
        }

    def check_mcp_servers(self, servers: Sequence[McpServerConfig], real_home: Path) -> None:
        """opencode runs on without a server it cannot reach, so ask ``opencode mcp list``
        (which connects to each) once before any attempt, in a throw-away sandbox."""
        from caliper.plugin.sandbox import make_sandbox, remove_sandbox

        cli = self.find_cli()
        if cli is None:
            return
        refs = EnvReferences(template=REFERENCE)
        sandbox = make_sandbox(spec_dir=Path.cwd(), prefix="caliper-opencode-mcp-")
        try:
            config = sandbox.private / "opencode.json"
            write_config(config, {}, skills=(), mcp=mcp_block(servers, refs))
            env = attempt_env(sandbox, config, refs.env)
            done = run_process(
                [str(cli), "mcp", "list"], env=env, cwd=sandbox.workdir, timeout=MCP_CHECK_TIMEOUT
            )
        finally:
            remove_sandbox(sandbox)
        secrets = SecretSet(frozenset(v for v in refs.env.values() if v))
        listing = _ANSI.sub("", done.stdout)
        broken = [
            f"{server.name} ({why})"
            for server in servers
            if (why := server_problem(listing, server.name)) is not None
        ]
        if broken:
            raise SetupError(
                secrets.redact(f"MCP server(s) opencode cannot use: {'; '.join(broken)}.") or "",
                hint="Fix the server (is it running? is the token right?) or remove it from mcp:.",
            )

    def attempt(self, cli: Path, request: AttemptRequest) -> AttemptResult:
        """One ``opencode run`` on the prompt (stdin), with the attempt's own config."""
        sandbox = request.sandbox
        user = read_user_config(sandbox.real_home)
        config = sandbox.private / "opencode.json"
        mcp = request.mcp or NativeMcpConfig()
        write_config(config, user, skills=[s.name for s in request.skills], mcp=mcp.data or {})
        copy_login(sandbox)
        argv = [str(cli), "run", "--format", "json", "--auto", "--title", "caliper attempt"]
        if request.model:
            argv += ["--model", request.model]
        done = run_agent(argv, attempt_env(sandbox, config, mcp.env), request)
        early = stopped_early(done, agent="opencode", timeout=request.timeout)
        if early is not None:
            return early.attempt_result(duration_seconds=done.duration_seconds)
        installed = [s.name for s in request.skills]
        return read_attempt(done, installed=installed, model=request.model or user.get("model"))

    def prompt(self, cli: Path, request: PromptRequest) -> PromptResult:
        """A judge question: the same run with every tool denied."""
        sandbox = request.sandbox
        user = read_user_config(sandbox.real_home)
        config = sandbox.private / "opencode.json"
        write_config(config, user, skills=(), mcp={}, no_tools=True)
        copy_login(sandbox)
        argv = [str(cli), "run", "--format", "json", "--title", "caliper judge"]
        if request.model:
            argv += ["--model", request.model]
        done = run_agent(argv, attempt_env(sandbox, config, {}), request)
        early = stopped_early(done, agent="opencode", timeout=request.timeout)
        if early is not None:
            return early.prompt_result(None)
        result = read_attempt(done, installed=(), model=request.model or user.get("model"))
        ending = AgentEnding(result.status, result.error)
        return ending.prompt_result(result.final_answer, model=result.model, usage=result.usage)


def server_problem(listing: str, name: str) -> str | None:
    """What ``opencode mcp list`` says is wrong with server ``name`` (None: connected)."""
    lines = listing.splitlines()
    for index, line in enumerate(lines):
        found = re.search(rf"(\S)\s+{re.escape(name)}\s+(\w[\w ]*?)\s*$", line)
        if found:
            if found.group(1) == "✓" and found.group(2) == "connected":
                return None
            detail = lines[index + 1].strip(" │") if index + 1 < len(lines) else ""
            return f"{found.group(2)}: {detail}" if detail else found.group(2)
    return "not listed by `opencode mcp list`"


class OpencodeSkillInstaller(FolderSkillInstaller):
    """opencode discovers skills at ``$XDG_CONFIG_HOME/opencode/skills/<name>/SKILL.md``."""

    id = "opencode"

    def skills_root(self, sandbox: AttemptSandbox) -> Path:
        """``<sandbox home>/.config/opencode/skills`` (the attempt's ``XDG_CONFIG_HOME``)."""
        return sandbox.home / ".config" / "opencode" / "skills"


class OpencodeMcpTranslator(McpTranslator):
    """The spec's servers as opencode's ``mcp`` block; secrets travel in the environment."""

    id = "opencode"

    def translate(
        self, servers: Sequence[McpServerConfig], sandbox: AttemptSandbox
    ) -> NativeMcpConfig:
        """``data`` is the block for the config file; ``env`` holds the referenced values."""
        refs = EnvReferences(template=REFERENCE)
        block = mcp_block(servers, refs)
        return NativeMcpConfig(env=refs.env, data=block)
