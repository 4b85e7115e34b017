"""The judge contract (``caliper.plugin.judge``) stands below the engine, the backends and
plugins."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import caliper

SOURCE_ROOT = Path(caliper.__file__).parent
ABOVE_THE_CONTRACT = {
    "caliper.host.engine",
    "caliper.host.plugins",
    "caliper.plugin.hookspecs",
    "caliper.plugin.backend",
}


def _module_file(name: str) -> Path | None:
    relative = Path(*name.split(".")[1:])
    for candidate in (
        SOURCE_ROOT / relative.with_suffix(".py"),
        SOURCE_ROOT / relative / "__init__.py",
    ):
        if candidate.is_file():
            return candidate
    return None


def _caliper_imports(path: Path) -> set[str]:
    """Every ``caliper.*`` module ``path`` names in an import, type-checking ones included."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("caliper."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("caliper."))
    return found


def test_the_judge_contract_reaches_no_engine_plugin_or_backend_module() -> None:
    """Follows imports statically (``if TYPE_CHECKING:`` blocks too): no cycle can form."""
    seen: set[str] = set()
    todo = ["caliper.plugin.judge"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = _module_file(name)
        if path is not None:
            todo.extend(_caliper_imports(path) - seen)
    assert "caliper.plugin.attempt" in seen  # the walk does follow the contract's own imports
    assert seen & ABOVE_THE_CONTRACT == set(), sorted(seen)


def test_importing_the_judge_contract_loads_no_engine_or_plugin_host() -> None:
    code = (
        "import sys, caliper.plugin.judge\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('caliper'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(done.stdout.split())
    assert "caliper.plugin.judge" in loaded
    assert loaded & ABOVE_THE_CONTRACT == set(), sorted(loaded)
    assert (
        "caliper.plugin.verdict" not in loaded
    )  # made on first use: `caliper validate` needs none


def test_the_check_time_types_are_imported_from_the_contract_on_first_use() -> None:
    """``from caliper.plugin.judge import Verdict`` (and the other check-time types) gives the
    class :mod:`caliper.plugin.verdict` defines; a name the contract does not have is an
    ``AttributeError`` as from any module."""
    code = (
        "import sys, caliper.plugin.judge\n"
        "before = 'caliper.plugin.verdict' in sys.modules\n"
        "from caliper.plugin.judge import Ask, JudgeContext, JudgeUsage, Reply, Verdict\n"
        "import caliper.plugin.verdict as v\n"
        "same = (Ask, JudgeContext, JudgeUsage, Reply, Verdict) == (\n"
        "    v.Ask, v.JudgeContext, v.JudgeUsage, v.Reply, v.Verdict)\n"
        "try:\n"
        "    caliper.plugin.judge.NoSuchThing\n"
        "    missing = 'no error'\n"
        "except AttributeError as exc:\n"
        "    missing = str(exc)\n"
        "print(before, same, Verdict(True).passed, missing, sep='|')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip().split("|") == [
        "False",
        "True",
        "True",
        "module 'caliper.plugin.judge' has no attribute 'NoSuchThing'",
    ]


STORED_RUN = Path(__file__).parent / "stored" / "judged-run-before-typed-judge-fields.json"
"""A results file written by caliper before checks had typed judge fields (the fake judge
graded two ``expect:`` tasks; a third task has ``assert:`` and ``activates:``)."""


def test_a_results_file_from_before_typed_judge_fields_loads_into_them() -> None:
    import json

    from caliper.plugin.judge import JudgeUsage
    from caliper.results import codec
    from caliper.results.scoring import judge_tokens

    text = STORED_RUN.read_text(encoding="utf-8")
    run = codec.loads(text)
    passed, failed, local = (task.attempts[0] for task in run.tasks)
    (expect,) = passed.checks
    assert (expect.backend, expect.model, expect.prompt_version) == (
        "fake",
        "fake-model-1",
        "expect-v1",
    )
    assert expect.usage == JudgeUsage(input_tokens=175, output_tokens=12)
    assert expect.details == {}  # the judge fields left details for their typed places
    assert judge_tokens(passed) == 187 and judge_tokens(failed) == 184
    assert judge_tokens(local) is None
    assert [c.model for c in local.checks] == [None, None]
    # Written again, every check keeps exactly the stored form it was read from.
    again = json.loads(codec.dumps(run))
    before = json.loads(text)
    for new_task, old_task in zip(again["tasks"], before["tasks"], strict=True):
        for new, old in zip(new_task["attempts"], old_task["attempts"], strict=True):
            assert new["checks"] == old["checks"]


def test_typed_judge_fields_are_saved_where_results_files_always_kept_them() -> None:
    import json

    from caliper.plugin.judge import JudgeUsage
    from caliper.results import codec
    from caliper.results.models import AttemptRecord, CheckRecord, Outcome

    check = CheckRecord(
        "grade",
        True,
        details={"score": 9},
        usage=JudgeUsage(input_tokens=5, output_tokens=2, cost_usd=0.25),
        backend="codex",
        model="gpt-judge",
        prompt_version="grade-v3",
    )
    stored = json.loads(
        codec.line(codec.attempt_data(AttemptRecord("t", 1, Outcome.PASS, checks=[check])))
    )
    assert stored["checks"][0]["details"] == {
        "score": 9,
        "judge_backend": "codex",
        "judge_model": "gpt-judge",
        "prompt_version": "grade-v3",
        "judge_usage": {
            "input_tokens": 5,
            "output_tokens": 2,
            "cache_read_tokens": None,
            "cache_creation_tokens": None,
            "cost_usd": 0.25,
        },
    }
    assert codec.attempt_from_data(stored).checks == [check]


def test_judge_calls_pick_the_engines_model_then_the_variable_then_the_backends_pin(
    monkeypatch,
) -> None:
    from caliper.plugin.backend import Backend
    from caliper.runner.attempt.judge_calls import judge_model_for

    class Pinned(Backend):
        id = "pinned"
        cli_name = "pinned"
        default_judge_model = "judge-pin-1"

        def run_attempt(self, request):  # pragma: no cover - never run here
            raise NotImplementedError

    class Unpinned(Pinned):
        default_judge_model = None

    monkeypatch.delenv("CALIPER_JUDGE_MODEL", raising=False)
    assert judge_model_for(Pinned(), None) == "judge-pin-1"
    assert judge_model_for(Unpinned(), None) is None  # the CLI's own default
    assert judge_model_for(Pinned(), "asked-2") == "asked-2"
    monkeypatch.setenv("CALIPER_JUDGE_MODEL", "from-env-3")
    assert judge_model_for(Pinned(), None) == "from-env-3"
    assert judge_model_for(Pinned(), "asked-2") == "asked-2"


def test_ask_runs_the_backends_prompt_in_a_fresh_sandbox_and_types_its_answer(
    tmp_path, monkeypatch
) -> None:
    import contextlib

    from caliper.host.engine import Engine
    from caliper.plugin.attempt import AgentStatus, PromptResult, Usage
    from caliper.plugin.backend import Backend
    from caliper.plugin.judge import JudgeUsage
    from caliper.runner.attempt.judge_calls import judge_ask

    monkeypatch.delenv("CALIPER_JUDGE_MODEL", raising=False)
    seen = []

    class Answers(Backend):
        id = "answers"
        cli_name = "answers"
        default_judge_model = "pin-1"

        def run_attempt(self, request):  # pragma: no cover - never run here
            raise NotImplementedError

        def run_prompt(self, request):
            seen.append(request)
            if "hang" in request.prompt:
                return PromptResult(AgentStatus.TIMEOUT, error="killed")
            if "refuse" in request.prompt:
                return PromptResult(AgentStatus.INFRA_ERROR, model="m-9", error="401 bad key")
            return PromptResult(
                AgentStatus.COMPLETED, text="yes", model="m-9", usage=Usage(10, 2, 3, None)
            )

    class Mute(Answers):
        run_prompt = Backend.run_prompt

    opened = []

    @contextlib.contextmanager
    def sandbox():
        opened.append("open")
        yield f"box-{len(opened)}"
        opened.append("closed")

    ask = judge_ask(lambda: Engine(Answers(), None), sandbox, budget=30)
    reply = ask("grade this", timeout=99)
    assert (reply.text, reply.backend, reply.model, reply.answered) == (
        "yes",
        "answers",
        "m-9",
        True,
    )
    assert reply.usage == JudgeUsage(10, 2, 3, None) and reply.usage.total_tokens == 15
    assert reply.duration_seconds is not None and reply.duration_seconds >= 0
    assert (seen[0].model, seen[0].timeout, seen[0].sandbox) == ("pin-1", 30, "box-1")
    assert opened == ["open", "closed"]

    late = ask("hang", timeout=5)
    assert (late.text, late.timed_out, late.error, late.answered) == (None, True, "killed", False)
    assert seen[1].timeout == 5
    refused = ask("refuse")
    assert (refused.error, refused.model, refused.timed_out) == ("401 bad key", "m-9", False)

    cannot = judge_ask(lambda: Engine(Mute(), "asked-2"), sandbox, budget=30)("grade")
    assert cannot.error == "The answers backend cannot be used as a judge engine."
    assert (cannot.model, cannot.answered) == ("asked-2", False)
    assert opened[-1] == "closed"  # the sandbox is removed whatever the backend did


def test_the_judge_model_variable_wins_over_the_model_that_model_names(monkeypatch) -> None:
    """Documented order: --judge-model, then CALIPER_JUDGE_MODEL, then what --model names.
    It was ignored whenever --model named a model (the judge followed --model's)."""
    from types import SimpleNamespace

    from caliper.host.engine import Engine
    from caliper.plugin.backend import Backend
    from caliper.runner import judge_engine_for

    class Agent(Backend):
        id = "agent"
        cli_name = "agent"
        default_judge_model = "pin-1"

        def run_attempt(self, request):  # pragma: no cover - never run here
            raise NotImplementedError

    agent = Agent()
    prepared = SimpleNamespace(engine=Engine(agent, "attempt-model", "agent:attempt-model"))
    options = SimpleNamespace(judge_model=None)
    monkeypatch.delenv("CALIPER_JUDGE_MODEL", raising=False)
    engine = judge_engine_for(None, options, prepared)
    assert (engine.backend, engine.model) == (agent, "attempt-model")
    monkeypatch.setenv("CALIPER_JUDGE_MODEL", "judge-from-env")
    engine = judge_engine_for(None, options, prepared)
    assert (engine.backend, engine.model) == (agent, "judge-from-env")
    prepared = SimpleNamespace(engine=Engine(agent, None, "agent"))
    assert judge_engine_for(None, options, prepared).model == "judge-from-env"


def test_one_rule_decides_the_judge_model_each_step_in_its_order(monkeypatch) -> None:
    """--judge-model's model > CALIPER_JUDGE_MODEL > --model's model > the backend's pin > the
    CLI's own default, all in decide_judge_engine/judge_model_for."""
    from types import SimpleNamespace

    from caliper.host.engine import Engine
    from caliper.plugin.backend import Backend
    from caliper.runner.attempt.judge_calls import decide_judge_engine, judge_model_for

    class Agent(Backend):
        id = "agent"
        cli_name = "agent"
        default_judge_model = "pin-4"

        def run_attempt(self, request):  # pragma: no cover - never run here
            raise NotImplementedError

    class Unpinned(Agent):
        id = "unpinned"
        default_judge_model = None

    agent = Agent()
    host = SimpleNamespace()  # resolve_engine is replaced below: no plugin is looked up
    flagged = {
        "agent:flag-1": Engine(agent, "flag-1", "agent:flag-1"),
        "agent": Engine(agent, None, "agent"),
    }
    monkeypatch.setattr(
        "caliper.host.engine.resolve_engine", lambda _host, text, flag: flagged[text.strip()]
    )
    run = Engine(agent, "run-3", "agent:run-3")
    bare_run = Engine(agent, None, "agent")
    monkeypatch.setenv("CALIPER_JUDGE_MODEL", "env-2")
    # 1. --judge-model's model beats everything
    assert decide_judge_engine(host, "agent:flag-1", run).model == "flag-1"
    assert judge_model_for(agent, "flag-1", follows="run-3") == "flag-1"
    # 2. the variable beats --model's model, and applies to a --judge-model naming no model
    assert decide_judge_engine(host, None, run).model == "env-2"
    assert decide_judge_engine(host, "  ", run).model == "env-2"
    assert decide_judge_engine(host, "agent", run).model == "env-2"
    monkeypatch.setenv("CALIPER_JUDGE_MODEL", "  ")  # blank: unset
    # 3. --model's model, when the judges follow the run (no --judge-model)
    assert decide_judge_engine(host, None, run).model == "run-3"
    assert decide_judge_engine(host, "agent", run).model == "pin-4"  # not followed
    monkeypatch.delenv("CALIPER_JUDGE_MODEL")
    # 4. the backend's pin
    assert decide_judge_engine(host, None, bare_run).model == "pin-4"
    assert judge_model_for(agent) == "pin-4"
    # 5. the CLI's own default
    engine = decide_judge_engine(host, None, Engine(Unpinned(), None, "unpinned"))
    assert engine.model is None and engine.backend_id == "unpinned"
    # the decided model passes through a judge call unchanged
    monkeypatch.setenv("CALIPER_JUDGE_MODEL", "env-2")
    assert judge_model_for(agent, decide_judge_engine(host, "agent:flag-1", run).model) == "flag-1"


def test_judge_usage_is_the_attempts_usage_and_saves_the_same_shape() -> None:
    from caliper.plugin.attempt import Usage
    from caliper.plugin.judge import JudgeUsage
    from caliper.results.codec import converter

    assert JudgeUsage is Usage
    assert converter().unstructure(Usage(1, 2, None, 4)) == {
        "input_tokens": 1,
        "output_tokens": 2,
        "cache_read_tokens": None,
        "cache_creation_tokens": 4,
    }
    assert converter().unstructure(Usage(1, cost_usd=0.5))["cost_usd"] == 0.5
    assert converter().structure({"input_tokens": 3}, Usage) == Usage(3)
    assert (Usage(1, cost_usd=0.5) + Usage(2)).cost_usd == 0.5
    assert (Usage(1) + Usage(2)) == Usage(3)
