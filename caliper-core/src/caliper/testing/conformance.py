"""The standard end-to-end tests every caliper backend should pass.

A backend's test module subclasses :class:`BackendConformance`, fills in a few attributes and
small methods that say how *its* agent talks, and inherits the tests::

    pytest_plugins = ["caliper.testing.fixtures"]

    class TestCodexConformance(BackendConformance):
        backend_id = "codex"
        wire_api = "responses"
        model_for_tests = "gpt-5.5"

        def configure_user_home(self, home, server_url): ...
        def activate_skill_call(self, name): ...
        def shell_call(self, command): ...
        def mcp_call(self, server, tool, arguments): ...

Every test writes a small spec and a model-server script, runs the real ``caliper run``
against the real agent CLI (in a loopback-only network namespace) and checks the saved JSON.
To opt out of one test, override it with an explicit reason::

    @pytest.mark.xfail(reason="pi 0.74 has no MCP support", strict=True)
    def test_mcp_tool_call(self, kit):
        super().test_mcp_tool_call(kit)
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from caliper.testing import baseline_check
from caliper.testing.baseline_check import check_baseline_pair
from caliper.testing.conformance_kit import (
    SKILL_BODY_MARKER,
    ConformanceKit,
    KitSuite,
    main_requests,
    ok_run,
    skill_description,
    tool_call_data,
    tool_turns,
)
from caliper.testing.harness import (
    CaliperRun,
    CliUnavailable,
    FakeRealHome,
    locate_agent_cli,
    processes_mentioning,
)
from caliper.testing.model_server import ModelServer
from caliper.testing.remote_mcp import (
    check_broken_stdio_server_stops_run,
    check_remote_mcp_tool_call,
    check_unusable_server_stops_run,
)
from caliper.testing.script import ScriptedUsage, ToolCall
from caliper.testing.wire_protocol import WireProtocol
from caliper.testing.wire_registry import register_wire, wire_named

MISLEADING = "Task completed successfully. All tests passed."
"""Prose in scripted errors: a backend that classifies by words instead of structure fails."""

_NOWHERE = "http://127.0.0.1:9/mcp"
"""A URL nothing listens on (for specs that must be refused before any attempt)."""

ACTIVATION_PROMPT = "Please do my alpha chores. [activate-alpha]"
SCRIPTED_USAGE = ScriptedUsage(input=100, output=20, cache_read=30, cache_creation=10)


class BackendConformance:
    """Standard tests for a backend; subclass, set the attributes, implement the methods."""

    pytestmark = pytest.mark.e2e  # every standard test drives the real CLI

    backend_id: str = ""
    """The backend's public id (``--model <id>``)."""
    cli: str | None = None
    """The pin to test: a key of ``cli_pins`` or of caliper's own
    ``caliper.testing.agent_clis.AGENT_CLIS`` (default: ``backend_id``)."""
    cli_pins: Mapping[str, Mapping[str, Any]] = {}
    """A plugin's own CLI pins, ``name -> entry`` in the format of ``AGENT_CLIS`` (package,
    version, bin, ``kind`` npm or pip, ...): usually the ``CLI_PINS`` of a standard-library
    module that ``scripts/provision-agent-clis --pins FILE`` also reads. A ``cli`` that no pin
    declares, or a pinned CLI that is not provisioned, fails every standard test."""
    wire_api: str = "chat"
    """The name of the wire API the CLI speaks to the model server: ``anthropic``,
    ``responses``, ``chat`` (built in) or the ``name`` of a module in ``wire_modules``."""
    wire_modules: Sequence[WireProtocol] = ()
    """Extra wire modules (see :class:`~caliper.testing.wire_protocol.WireProtocol`) that
    :meth:`wire` registers before every test, for an agent whose API is not built in."""
    model_for_tests: str | None = None
    """Model name passed as ``--model <id>:<model>`` (None: the backend default)."""
    attempt_timeout: float = 90.0
    """``--timeout`` for ordinary attempts (the hang test uses ``hang_timeout``)."""
    hang_timeout: float = 8.0
    """``--timeout`` for the hang test, whose model never answers."""

    # what a backend supplies ---------------------------------------------------------------
    def configure_user_home(self, home: Path, server_url: str) -> Mapping[str, str] | None:
        """Write the user's CLI configuration into ``home`` pointing at ``server_url``.

        ``server_url`` is ``http://127.0.0.1:PORT`` (append ``/v1`` for OpenAI-style base
        URLs). Return extra environment variables for the ``caliper`` process (e.g. an API
        key variable the backend forwards), or None.
        """
        raise NotImplementedError

    def activate_skill_call(self, name: str) -> ToolCall:
        """The tool call a model makes to load skill ``name`` (may use ``{{skill_path:NAME}}``)."""
        raise NotImplementedError

    def shell_call(self, command: str) -> ToolCall:
        """The tool call a model makes to run ``command`` in a shell."""
        raise NotImplementedError

    def mcp_call(self, server: str, tool: str, arguments: Mapping[str, Any]) -> ToolCall:
        """The tool call a model makes to call MCP ``tool`` on ``server``.

        By default a call named by the backend's ``mcp_tool_name(server, tool)``; override it
        when the wire name differs (Codex sends a namespaced call).
        """
        return ToolCall(self.backend().mcp_tool_name(server, tool), dict(arguments))

    def aux_rules(self) -> list[dict[str, Any]]:
        """Rules put first in every script (e.g. answer a CLI's tool-less side calls)."""
        return []

    def expected_usage(self, scripted: ScriptedUsage) -> dict[str, int | None]:
        """The saved ``usage`` for one model reply reporting ``scripted``.

        Anthropic reports all four parts; the OpenAI APIs fold cache writes into input.
        """
        if self.wire_api == "anthropic":
            return {
                "input_tokens": scripted.input,
                "output_tokens": scripted.output,
                "cache_read_tokens": scripted.cache_read,
                "cache_creation_tokens": scripted.cache_creation,
            }
        return {
            "input_tokens": scripted.input + scripted.cache_creation,
            "output_tokens": scripted.output,
            "cache_read_tokens": scripted.cache_read,
            "cache_creation_tokens": 0,
        }

    def wire_model(self, model: str) -> str:
        """The model name the server receives when ``--model <id>:<model>`` is asked for.

        The same string by default; an agent that takes ``provider/model`` sends only the
        model part (override: ``return model.split("/", 1)[-1]``).
        """
        return model

    def make_server(self, script: Mapping[str, Any]) -> ModelServer:
        """The scripted model server :meth:`ConformanceKit.server` starts for ``script``.

        A plain :class:`~caliper.testing.model_server.ModelServer` by default (it speaks every
        registered wire); override it to serve from a subclass or with other arguments.
        """
        return ModelServer(script)

    # plumbing ----------------------------------------------------------------------------
    def wire(self) -> WireProtocol:
        """Register ``wire_modules`` and return the wire module named ``wire_api``.

        Raises :class:`~caliper.testing.wire_registry.UnknownWireError` (naming the registered
        wires) when no registered module has that name.
        """
        for module in self.wire_modules:
            register_wire(module)
        return wire_named(self.wire_api)

    def engine(self) -> str:
        """The ``--model`` value."""
        return (
            f"{self.backend_id}:{self.model_for_tests}" if self.model_for_tests else self.backend_id
        )

    def backend(self) -> Any:
        """The installed backend object (through the plugin host, as caliper loads it)."""
        from caliper.host.plugins import PluginHost

        found = PluginHost().backends([self.backend_id])
        assert self.backend_id in found, f"backend {self.backend_id!r} is not installed"
        return found[self.backend_id]

    @pytest.fixture
    def kit(self, tmp_path: Path) -> Any:
        """A :class:`ConformanceKit` for one test.

        Fails when the CLI is unknown or not provisioned (saying how to provision it); skips
        only outside a loopback-only network namespace, where no agent CLI may run.
        """
        try:
            self.wire()
        except LookupError as exc:
            pytest.fail(f"{type(self).__name__}.wire_api: {exc}", pytrace=False)
        name = self.cli or self.backend_id
        cli = locate_agent_cli(name, tmp_path / f"cli-{name}", self.cli_pins)
        if isinstance(cli, CliUnavailable):
            if cli.kind == "offline":
                pytest.skip(cli.reason)
            pytest.fail(f"{type(self).__name__}: {cli.reason}", pytrace=False)
        kit = ConformanceKit(self, tmp_path, FakeRealHome(tmp_path / "real-home"), cli)
        yield kit
        kit.close()

    def _plain(self, kit: ConformanceKit, text: str, **turn: Any) -> ModelServer:
        return kit.server(kit.script([{"text": text, **turn}]))

    # the standard tests --------------------------------------------------------------------
    def test_plain_answer(self, kit: ConformanceKit) -> None:
        """A one-turn text answer is the attempt's final answer; the prompt reached the model."""
        server = self._plain(kit, "The answer is 42.")
        spec = kit.spec(
            [{"name": "plain", "prompt": "What is six times seven?", "assert": "assert True"}]
        )
        run = kit.run(spec, server)
        attempt = ok_run(run)
        assert attempt["outcome"] == "pass", run.describe()
        assert "The answer is 42." in (attempt["final_answer"] or ""), run.describe()
        requests = server.model_requests()
        assert requests, "the agent never called the model server"
        assert main_requests(server, "What is six times seven?"), "the prompt never reached it"
        assert {r.api for r in requests} == {self.wire_api}

    def _activation_run(self, kit: ConformanceKit) -> tuple[CaliperRun, ModelServer]:
        skills = [kit.skill("alpha-target"), kit.skill("beta-neighbour")]
        load = self.activate_skill_call("alpha-target")
        script = kit.script(
            rules=[
                {
                    "when": {"user_text_contains": "[activate-alpha]"},
                    "turns": [
                        {"text": "Loading the alpha skill.", "tool_calls": [_call(load)]},
                        {"text": "Alpha chores done."},
                    ],
                }
            ]
        )
        server = kit.server(script)
        spec = kit.spec(
            [
                {
                    "name": "activation",
                    "prompt": ACTIVATION_PROMPT,
                    "activates": ["alpha-target"],
                }
            ],
            skills=skills,
        )
        return kit.run(spec, server), server

    def test_skill_discovered_and_activated(self, kit: ConformanceKit) -> None:
        """An installed skill is advertised (description, not body), chosen and reported."""
        run, server = self._activation_run(kit)
        attempt = ok_run(run)
        assert attempt["activated"] == ["alpha-target"], run.describe()
        assert attempt["activation_passed"] is True, run.describe()
        requests = server.model_requests()
        main = main_requests(server, ACTIVATION_PROMPT)
        assert main, "the task prompt never reached the model"
        first = main[0].sent_text()
        assert skill_description("alpha-target")[:50] in first
        assert SKILL_BODY_MARKER.format(name="alpha-target") not in first
        assert not any(r.unresolved for r in requests), [r.unresolved for r in requests]
        later = "\n".join(r.sent_text() for r in main[1:])
        assert SKILL_BODY_MARKER.format(name="alpha-target") in later, "skill body never loaded"
        assert not run.home_changes, run.home_changes

    def test_neighbour_skill_not_activated(self, kit: ConformanceKit) -> None:
        """A neighbour is advertised too, but not reported when the model did not choose it."""
        run, server = self._activation_run(kit)
        attempt = ok_run(run)
        assert "beta-neighbour" not in (attempt["activated"] or []), run.describe()
        first = main_requests(server, ACTIVATION_PROMPT)[0].sent_text()
        assert skill_description("beta-neighbour")[:50] in first
        assert SKILL_BODY_MARKER.format(name="beta-neighbour") not in server.all_sent_text()

    def test_ablation_leaves_the_skill_out(self, kit: ConformanceKit) -> None:
        """``--ablate NAME`` means the model never hears of NAME."""
        skills = [kit.skill("alpha-target"), kit.skill("beta-neighbour")]
        server = self._plain(kit, "Nothing to load.")
        spec = kit.spec(
            [{"name": "ablated", "prompt": "Do my alpha chores.", "activates": []}], skills=skills
        )
        run = kit.run(spec, server, "--ablate", "alpha-target")
        attempt = ok_run(run)
        sent = server.all_sent_text()
        assert skill_description("alpha-target")[:50] not in sent
        assert skill_description("beta-neighbour")[:50] in sent
        assert run.results["meta"]["ablated"] == ["alpha-target"]
        assert "alpha-target" not in (attempt["activated"] or [])

    def test_tool_call_in_transcript(self, kit: ConformanceKit) -> None:
        """A shell tool call shows in the transcript with its input and its real output."""
        call = self.shell_call("printf 'OUT-%s' 42")
        server = kit.server(kit.script([{"tool_calls": [_call(call)]}, {"text": "Printed it."}]))
        spec = kit.spec([{"name": "tool", "prompt": "Print the thing.", "assert": "assert True"}])
        run = kit.run(spec, server)
        attempt = ok_run(run)
        turns = tool_turns(attempt)
        matching = [t for t in turns if "printf" in json.dumps(t.get("tool_input"))]
        assert matching, f"no tool turn with the command: {turns}\n{run.describe()}"
        assert "OUT-42" in (matching[0].get("tool_output") or ""), matching[0]
        assert any(
            "OUT-42" in r for q in server.model_requests() for r in q.conversation.tool_results
        )

    def test_tool_vocabulary_declared(self) -> None:
        """The backend maps the tool vocabulary to its own names (``tool_vocabulary()``),
        at least ``shell``, and only kinds of the vocabulary."""
        from caliper.plugin.tools import TOOL_KINDS

        vocabulary = self.backend().tool_vocabulary()
        assert vocabulary.get("shell"), f"no shell tool in tool_vocabulary(): {vocabulary}"
        assert set(vocabulary) <= set(TOOL_KINDS), vocabulary

    def test_tools_check_on_the_transcript(self, kit: ConformanceKit) -> None:
        """``tools:`` reads the real CLI's transcript through the backend's vocabulary: a
        shell check with an ``input:`` pattern passes, and ``not_called: shell`` fails naming
        the call."""
        call = self.shell_call("printf 'TOOLS-%s' 7")
        server = kit.server(kit.script([{"tool_calls": [_call(call)]}, {"text": "Done."}]))
        checks_pass = [
            {"called": "shell", "input": "^printf 'TOOLS-", "at_most": 1},
            {"not_called": "shell", "input": "^rm "},
        ]
        tasks = [
            {"name": "tools-pass", "prompt": "Print it.", "tools": checks_pass},
            {"name": "tools-fail", "prompt": "Print that.", "tools": [{"not_called": "shell"}]},
        ]
        run = kit.run(kit.spec(tasks), server)
        assert run.results is not None, run.describe()
        good = run.attempts("tools-pass")[0]
        assert good["outcome"] == "pass", (good.get("checks"), run.describe())
        bad = run.attempts("tools-fail")[0]
        check = next(c for c in bad["checks"] if c["key"] == "tools")
        assert check["passed"] is False, check
        assert "shell was called: call 1 (turn" in check["reason"], check
        assert "TOOLS-" in check["reason"], check

    def test_tools_check_of_an_mcp_call(self, kit: ConformanceKit) -> None:
        """``tools: [{called: mcp:SERVER/TOOL}]`` passes on the real CLI's MCP call, and
        ``not_called: mcp:SERVER/*`` fails naming it. A backend without MCP support must refuse
        the spec before any attempt instead."""
        mcp = {"echo": {"command": sys.executable, "args": ["-m", "caliper.testing.mcp_echo"]}}
        if not self.backend().supports_mcp():
            self._assert_mcp_refused(kit, mcp)
            return
        call = self.mcp_call("echo", "echo", {"text": "MCP-TOOLS-3"})
        server = kit.server(kit.script([{"tool_calls": [_call(call)]}, {"text": "Echoed."}]))
        tasks = [
            {"name": "mcp-pass", "prompt": "Echo it.", "tools": [{"called": "mcp:echo/echo"}]},
            {"name": "mcp-fail", "prompt": "Echo that.", "tools": [{"not_called": "mcp:echo/*"}]},
        ]
        run = kit.run(kit.spec(tasks, mcp=mcp), server)
        assert run.results is not None, run.describe()
        good = run.attempts("mcp-pass")[0]
        assert good["outcome"] == "pass", (good.get("checks"), run.describe())
        bad = run.attempts("mcp-fail")[0]
        check = next(c for c in bad["checks"] if c["key"] == "tools")
        assert check["passed"] is False, check
        assert "mcp:echo/* was called: call 1 (turn" in check["reason"], check
        assert self.backend().mcp_tool_name("echo", "echo") in check["reason"], check

    def test_usage_parsed_and_normalised(self, kit: ConformanceKit) -> None:
        """Token usage is read from structured output, as four disjoint numbers; a cost, when
        the CLI reports one (``cost_usd``), is a non-negative number of USD."""
        usage = attrs_dict(SCRIPTED_USAGE)
        server = self._plain(kit, "Counted.", usage=usage)
        spec = kit.spec([{"name": "usage", "prompt": "Count tokens.", "assert": "assert True"}])
        run = kit.run(spec, server)
        attempt = ok_run(run)
        assert len(server.model_requests()) == 1, "expected exactly one model request"
        saved = dict(attempt["usage"] or {})
        cost = saved.pop("cost_usd", None)
        assert saved == self.expected_usage(SCRIPTED_USAGE), run.describe()
        assert cost is None or (isinstance(cost, (int, float)) and cost >= 0), cost

    def test_model_name_resolved_and_recorded(self, kit: ConformanceKit) -> None:
        """The model asked for is the one sent to the server and recorded in the results."""
        server = self._plain(kit, "Model check.")
        spec = kit.spec([{"name": "model", "prompt": "Which model?", "assert": "assert True"}])
        run = kit.run(spec, server)
        attempt = ok_run(run)
        sent = {r.model for r in main_requests(server, "Which model?")}
        assert attempt["model"], run.describe()
        if self.model_for_tests:
            assert sent == {self.wire_model(self.model_for_tests)}, sent
            assert self.model_for_tests in attempt["model"]
            assert (
                run.results["meta"]["model"]
                and self.model_for_tests in run.results["meta"]["model"]
            )

    def test_auth_error_is_a_setup_error(self, kit: ConformanceKit) -> None:
        """401 stops the run with exit 3 and one clear message (no traceback)."""
        error = {"status": 401, "message": f"{MISLEADING} Invalid API key (scripted)."}
        server = kit.server(kit.script([{"error": error, "times": -1}]))
        spec = kit.spec([{"name": "auth", "prompt": "Hello?", "assert": "assert True"}])
        run = kit.run(spec, server)
        assert run.returncode == 3, run.describe()
        assert run.stderr.strip(), run.describe()
        assert "Traceback" not in run.stderr + run.stdout
        assert not any(a["outcome"] == "pass" for a in run.attempts())

    @pytest.mark.parametrize("status", [429, 500])
    def test_provider_error_is_infra_error(self, kit: ConformanceKit, status: int) -> None:
        """429/500 are infra errors, decided from structured output despite a 'success' text."""
        error = {"status": status, "message": MISLEADING, "retry_after": 0}
        server = kit.server(kit.script([{"error": error, "times": -1}]))
        spec = kit.spec([{"name": "provider", "prompt": "Hello?", "assert": "assert True"}])
        run = kit.run(spec, server)
        assert run.results is not None, run.describe()
        assert [a["outcome"] for a in run.attempts()] == ["infra_error"], run.describe()
        assert run.returncode == 1, run.describe()

    def test_hang_is_killed_at_timeout(self, kit: ConformanceKit) -> None:
        """A model that never answers: the attempt times out and nothing is left running."""
        server = self._plain(kit, "Too late.", delay=600)
        spec = kit.spec([{"name": "hang", "prompt": "Wait for it.", "assert": "assert True"}])
        run = kit.run(spec, server, timeout=self.hang_timeout)
        assert [a["outcome"] for a in run.attempts()] == ["timeout"], run.describe()
        assert run.duration < self.hang_timeout + 60, run.duration
        survivors: list[str] = []
        for _ in range(50):
            survivors = processes_mentioning(str(run.sandbox_parent))
            if not survivors:
                break
            time.sleep(0.1)
        assert not survivors, survivors

    def test_missing_cli_reported_once(self, kit: ConformanceKit) -> None:
        """No CLI at all: exit 3 and the install hint once, before any attempt."""
        backend = self.backend()
        server = self._plain(kit, "unused")
        spec = kit.spec(
            [
                {"name": "one", "prompt": "Hello?", "assert": "assert True"},
                {"name": "two", "prompt": "Hello again?", "assert": "assert True"},
            ]
        )
        missing = kit.root / "no-such-dir" / backend.cli_name
        run = kit.run(spec, server, env={backend.cli_path_variable: str(missing)}, path="")
        assert run.returncode == 3, run.describe()
        assert "Traceback" not in run.stderr
        if backend.install_hint:
            assert run.stderr.count(backend.install_hint) == 1, run.describe()
        assert not server.model_requests()

    def test_mcp_tool_call(self, kit: ConformanceKit) -> None:
        """A stdio MCP server's tool is called and shows under the backend's
        ``mcp_tool_name(server, tool)`` (``mcp__<server>__<tool>`` unless it says otherwise).

        Backends whose ``supports_mcp()`` is false must refuse the spec before any attempt.
        """
        log = kit.root / "mcp-echo.log"
        mcp = {
            "echo": {
                "command": sys.executable,
                "args": ["-m", "caliper.testing.mcp_echo", "--log", str(log)],
            }
        }
        if not self.backend().supports_mcp():
            self._assert_mcp_refused(kit, mcp)
            return
        call = self.mcp_call("echo", "echo", {"text": "MCP-PING-7"})
        server = kit.server(kit.script([{"tool_calls": [_call(call)]}, {"text": "Echoed."}]))
        spec = kit.spec([{"name": "mcp", "prompt": "Echo it.", "assert": "assert True"}], mcp=mcp)
        run = kit.run(spec, server)
        attempt = ok_run(run)
        tool_name = self.backend().mcp_tool_name("echo", "echo")
        named = [t for t in tool_turns(attempt) if t.get("tool_name") == tool_name]
        assert named, f"no {tool_name} turn: {tool_turns(attempt)}"
        assert "MCP-PING-7" in (named[0].get("tool_output") or ""), named[0]
        calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        assert any(m.get("method") == "tools/call" for m in calls), calls
        assert not run.home_changes, run.home_changes

    @pytest.mark.parametrize("answer", ["json", "sse"])
    def test_remote_mcp_tool_call(self, kit: ConformanceKit, answer: str) -> None:
        """A remote (Streamable HTTP) server whose header holds ``${VAR}``: the tool is called
        with the resolved secret, and the secret is written nowhere. See
        :mod:`caliper.testing.remote_mcp`. Refused before any attempt without MCP support.
        """
        if not self.backend().supports_mcp():
            self._assert_mcp_refused(kit, {"remote": {"type": "http", "url": _NOWHERE}})
            return
        check_remote_mcp_tool_call(kit, sse=answer == "sse")

    @pytest.mark.parametrize("why", ["refused", "down", "stdio-exits"])
    def test_unusable_mcp_server_stops_the_run(self, kit: ConformanceKit, why: str) -> None:
        """A server that refuses the token, is not listening, or (stdio) exits at once stops
        the run with exit 3 naming it, instead of attempts scored without its tools."""
        if not self.backend().supports_mcp():
            self._assert_mcp_refused(kit, {"remote": {"type": "http", "url": _NOWHERE}})
            return
        if why == "stdio-exits":
            check_broken_stdio_server_stops_run(kit)
        else:
            check_unusable_server_stops_run(kit, why)

    def _assert_mcp_refused(self, kit: ConformanceKit, mcp: dict[str, Any]) -> None:
        """A backend without MCP refuses an ``mcp:`` spec before any attempt reaches a model."""
        server = kit.server(kit.script([{"text": "x"}]))
        spec = kit.spec([{"name": "mcp", "prompt": "Echo it.", "assert": "assert True"}], mcp=mcp)
        run = kit.run(spec, server)
        assert run.returncode in (2, 3), run.describe()
        assert "Traceback" not in run.stderr
        assert not server.model_requests(), "an attempt ran although MCP is unsupported"

    def test_baseline_pair(self, kit: ConformanceKit) -> None:
        """``run --baseline``: a skill the task needs is reported as helping, with significance,
        a task every agent manages as no detectable difference, and the arms interleave. See
        :mod:`caliper.testing.baseline_check`."""
        load = self.activate_skill_call(baseline_check.SKILL_NAME)
        check_baseline_pair(kit, load, self.shell_call("echo yes > out.txt"))

    def test_real_home_never_written(self, kit: ConformanceKit) -> None:
        """Skills, shell commands and the CLI's own bookkeeping stay out of the real home."""
        (kit.home.path / "notes.txt").write_text("the user's own file\n")
        run, _ = self._activation_run(kit)
        ok_run(run)
        assert not run.home_changes, run.home_changes


def _call(call: ToolCall | None) -> dict[str, Any]:
    assert call is not None
    return tool_call_data(call)


def attrs_dict(usage: ScriptedUsage) -> dict[str, int]:
    """A ScriptedUsage as the script's ``usage:`` mapping."""
    return {
        "input": usage.input,
        "output": usage.output,
        "cache_read": usage.cache_read,
        "cache_creation": usage.cache_creation,
    }


__all__ = [
    "MISLEADING",
    "SKILL_BODY_MARKER",
    "BackendConformance",
    "ConformanceKit",
    "KitSuite",
    "ToolCall",
    "main_requests",
    "ok_run",
    "skill_description",
    "tool_turns",
]
