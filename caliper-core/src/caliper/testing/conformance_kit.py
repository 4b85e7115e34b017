"""The building blocks of a conformance test: :class:`ConformanceKit` and its helpers.

:mod:`caliper.testing.conformance` (the standard tests) and the checks it calls
(:mod:`caliper.testing.remote_mcp`, :mod:`caliper.testing.listing`, ...) all build on these;
``caliper.testing.conformance`` re-exports them, so a backend's tests import them from either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import yaml

from caliper.testing.harness import AgentCli, CaliperRun, FakeRealHome, run_caliper_process
from caliper.testing.model_server import ModelServer, RecordedRequest
from caliper.testing.script import ToolCall
from caliper.testing.wire_protocol import WireProtocol

SKILL_BODY_MARKER = "BODY-MARKER-{name}"


class KitSuite(Protocol):
    """What a :class:`ConformanceKit` asks of its suite (a ``BackendConformance`` has it all)."""

    attempt_timeout: float

    def configure_user_home(self, home: Path, server_url: str) -> Mapping[str, str] | None:
        """Write the CLI's configuration into ``home``; return extra environment variables."""
        ...

    def aux_rules(self) -> list[dict[str, Any]]:
        """Rules put first in every script."""
        ...

    def make_server(self, script: Mapping[str, Any]) -> ModelServer:
        """A (not yet started) scripted model server for ``script``."""
        ...

    def wire(self) -> WireProtocol:
        """Register the suite's own wire modules; return the one its agent speaks."""
        ...

    def engine(self) -> str:
        """The ``--model`` value."""
        ...

    def backend(self) -> Any:
        """The installed backend object."""
        ...


def skill_description(name: str) -> str:
    """A short description (Hermes shows only the first 57 characters)."""
    return f"Handles {name} chores. Use for {name} work."


class ConformanceKit:
    """What one conformance test works with: a project folder, a fake home, the CLI.

    Making one registers the suite's wire modules (``suite.wire()``), so its servers speak
    the suite's wire API however the kit was built.
    """

    def __init__(self, suite: KitSuite, root: Path, home: FakeRealHome, cli: AgentCli):
        suite.wire()
        self.suite = suite
        self.root = root
        self.project = root / "project"
        self.project.mkdir(parents=True, exist_ok=True)
        self.home = home
        self.cli = cli
        self.servers: list[ModelServer] = []
        self._runs = 0

    # building blocks ---------------------------------------------------------------------
    def skill(self, name: str) -> str:
        """Write ``skills/<name>/SKILL.md`` (body carries a marker); return the spec entry."""
        folder = self.project / "skills" / name
        folder.mkdir(parents=True, exist_ok=True)
        body = f"# {name}\n\nFollow these steps. {SKILL_BODY_MARKER.format(name=name)}\n"
        text = f"---\nname: {name}\ndescription: {skill_description(name)}\n---\n{body}"
        (folder / "SKILL.md").write_text(text, encoding="utf-8")
        return f"./skills/{name}/SKILL.md"

    def spec(self, tasks: Sequence[Mapping[str, Any]], **sections: Any) -> Path:
        """Write ``conf.eval.yaml`` with ``tasks`` and other top-level ``sections``."""
        data = {k: v for k, v in sections.items() if v is not None}
        data["tasks"] = list(tasks)
        path = self.project / "conf.eval.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        return path

    def script(self, turns: Sequence[Mapping[str, Any]] = (), **extra: Any) -> dict[str, Any]:
        """A script: the suite's ``aux_rules`` first, then ``rules``/``turns`` given here."""
        rules = [*self.suite.aux_rules(), *extra.pop("rules", [])]
        return {"rules": rules, "turns": list(turns), **extra}

    def server(self, script: Mapping[str, Any]) -> ModelServer:
        """Start the suite's scripted model server for ``script`` (stopped at teardown).

        The server comes from the suite's ``make_server`` (by default a plain
        :class:`~caliper.testing.model_server.ModelServer`).
        """
        server = self.suite.make_server(script).start()
        self.servers.append(server)
        return server

    # running -------------------------------------------------------------------------------
    def run(
        self,
        spec: Path,
        server: ModelServer,
        *extra_args: str,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        path: str | None = None,
    ) -> CaliperRun:
        """``caliper run SPEC --k 1 --model <engine> --timeout T`` against ``server``."""
        self._runs += 1
        config_env = self.suite.configure_user_home(self.home.path, server.url) or {}
        full_env = {
            self.suite.backend().cli_path_variable: str(self.cli.path),
            **config_env,
            **(env or {}),
        }
        attempt_timeout = timeout or self.suite.attempt_timeout
        return run_caliper_process(
            "run",
            spec,
            "--k",
            "1",
            "--workers",
            "1",
            "--model",
            self.suite.engine(),
            "--timeout",
            f"{attempt_timeout:g}",
            *extra_args,
            home=self.home,
            cwd=self.project,
            sandbox_parent=self.root / f"sandboxes-{self._runs}",
            env=full_env,
            path=self.cli.path_env() if path is None else path,
            timeout=attempt_timeout * 3 + 120,
        )

    def close(self) -> None:
        """Stop every server this kit started."""
        for server in self.servers:
            server.stop()


def main_requests(server: ModelServer, prompt: str) -> list[RecordedRequest]:
    """The model requests of the attempt's main conversation, in order.

    Agents make side calls besides the conversation itself (opencode names the session in a
    tool-less request *before* the first real one; others ask for approvals or titles), so
    "the first request" is not the conversation. The main conversation is the requests whose
    user text carries the task's ``prompt`` and that offer the model tools; when none offers
    tools, the requests carrying the prompt.
    """
    carrying = [
        r for r in server.model_requests() if prompt in "\n".join(r.conversation.user_texts)
    ]
    with_tools = [r for r in carrying if r.conversation.has_tools]
    return with_tools or carrying


def tool_turns(attempt: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``tool`` turns of a saved attempt's transcript."""
    return [t for t in attempt.get("transcript") or [] if t.get("role") == "tool"]


def ok_run(run: CaliperRun) -> dict[str, Any]:
    """The single attempt of a run that must have finished cleanly."""
    assert run.returncode == 0, run.describe()
    assert run.results is not None, run.describe()
    return run.attempt


__all__ = [
    "SKILL_BODY_MARKER",
    "ConformanceKit",
    "KitSuite",
    "main_requests",
    "ok_run",
    "skill_description",
    "tool_turns",
]


def tool_call_data(call: ToolCall) -> dict[str, Any]:
    """``call`` as a script's ``tool_calls:`` entry."""
    out: dict[str, Any] = {"name": call.name, "arguments": call.arguments}
    if call.namespace:
        out["namespace"] = call.namespace
    if call.custom:
        out["custom"] = True
    return out
