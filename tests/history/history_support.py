"""Shared pieces of the planted-conversation end-to-end tests (imported as ``history_support``).

``PlantedConversationCase`` runs one spec whose task starts from a planted conversation through the
real ``caliper`` script and the real agent CLI, against a scripted model server, and checks
what the model received and what was saved. Each backend's test subclasses it with the same
user configuration its conformance suite uses.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from caliper.testing.conformance import ConformanceKit
from caliper.testing.harness import FakeRealHome
from caliper.testing.model_server import RecordedRequest

HISTORY = """\
turns:
  - user: PLANTED-USER please read notes.txt
  - assistant: PLANTED-ASSISTANT I will read it first.
  - shell:
      command: cat notes.txt
      output: |
        PLANTED-OUTPUT step one is done
  - assistant: PLANTED-FINAL Step one is done; say when to go on.
"""
PROMPT = "NEW-PROMPT go on with step two"
FOLLOW_UP = "echo NEW-OUTPUT | tee step2.txt"


def request_items(request: RecordedRequest) -> list[tuple[str, str]]:
    """The conversation of one model request in order, as ``(kind, text)`` pairs.

    ``kind`` is ``user``, ``assistant``, ``call`` (a tool call: its name and arguments) or
    ``result`` (a tool result). System and developer messages are left out.
    """
    body = request.body
    items: list[tuple[str, str]] = []
    if request.api == "anthropic":
        for message in body.get("messages") or ():
            content = message.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            for block in blocks:
                kind = block.get("type")
                if kind == "text":
                    items.append((message["role"], block.get("text") or ""))
                elif kind == "tool_use":
                    items.append(("call", f"{block['name']} {json.dumps(block.get('input'))}"))
                elif kind == "tool_result":
                    items.append(("result", _text(block.get("content"))))
    elif request.api == "responses":
        for item in body.get("input") or ():
            kind = item.get("type", "message")
            if kind == "message" and item.get("role") in ("user", "assistant"):
                items.append((item["role"], _text(item.get("content"))))
            elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
                arguments = item.get("arguments", item.get("input", item.get("action")))
                items.append(("call", f"{item.get('name')} {_text(arguments)}"))
            elif kind.endswith("_output"):
                items.append(("result", _text(item.get("output"))))
    elif request.api == "gemini":
        for content in body.get("contents") or ():
            role = "assistant" if content.get("role") == "model" else "user"
            for part in content.get("parts") or ():
                if part.get("thought"):
                    continue
                if "functionCall" in part:
                    call = part["functionCall"]
                    items.append(("call", f"{call.get('name')} {json.dumps(call.get('args'))}"))
                elif "functionResponse" in part:
                    items.append(("result", _text(part["functionResponse"].get("response"))))
                elif part.get("text"):
                    items.append((role, part["text"]))
    else:  # chat completions
        for message in body.get("messages") or ():
            role = message.get("role")
            if role in ("user", "assistant") and _text(message.get("content")):
                items.append((role, _text(message.get("content"))))
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                items.append(("call", f"{function.get('name')} {function.get('arguments')}"))
            if role == "tool":
                items.append(("result", _text(message.get("content"))))
    return items


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(part) for part in value)
    if isinstance(value, dict):
        for key in ("text", "output", "content", "command", "cmd"):
            if key in value:
                return _text(value[key])
        return json.dumps(value)
    return str(value)


class PlantedConversationCase:
    """One planted-conversation run per backend; subclasses set the suite attributes."""

    suite: Any = None
    """A conformance-suite object (``configure_user_home``, ``engine``, ``backend`` …)."""
    cli: str = ""
    shell_tool: str = ""
    """The name the backend's shell tool is called in the model's tool calls."""

    def follow_up_call(self) -> dict[str, Any]:
        """The scripted model's tool call after the prompt (a shell command)."""
        call = self.suite.shell_call(FOLLOW_UP)
        return {"name": call.name, "arguments": dict(call.arguments)}

    @pytest.fixture
    def kit(self, tmp_path: Path, agent_cli: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
        cli = agent_cli(self.cli)
        monkeypatch.setenv(self.suite.backend().cli_path_variable, str(cli.path))
        kit = ConformanceKit(self.suite, tmp_path, FakeRealHome(tmp_path / "real-home"), cli)
        yield kit
        kit.close()

    def run_planted(self, kit: ConformanceKit) -> tuple[Any, list[RecordedRequest], Path]:
        history = kit.project / "history.yaml"
        history.write_text(HISTORY, encoding="utf-8")
        rules = [
            {"when": {"tool_result_contains": "NEW-OUTPUT"}, "text": "STEP-TWO-DONE"},
            {
                "when": {"user_text_contains": "NEW-PROMPT"},
                "tool_calls": [self.follow_up_call()],
                "times": 2,
            },
        ]
        server = kit.server(kit.script([], rules=rules, fallback_text="STEP-TWO-DONE"))
        spec = kit.spec(
            [
                {
                    "name": "continues",
                    "history": "history.yaml",
                    "setup": "echo 'the real notes.txt is not what the history showed' > notes.txt",
                    "prompt": PROMPT,
                    "assert": "assert open('step2.txt').read() == 'NEW-OUTPUT\\n'",
                }
            ]
        )
        run = kit.run(spec, server)
        return run, server.model_requests(), history

    def check_planted_run(self, kit: ConformanceKit) -> None:
        run, requests, history = self.run_planted(kit)
        assert run.returncode == 0, run.describe()
        first = requests[0]  # the model's very first request of the attempt
        assert PROMPT in first.sent_text(), [r.sent_text()[-300:] for r in requests]
        items = request_items(first)
        texts = [text for _, text in items]
        # the planted turns arrive as real messages, in order, before the prompt
        where = {
            marker: next(i for i, (_, text) in enumerate(items) if marker in text)
            for marker in ("PLANTED-USER", "PLANTED-ASSISTANT", "PLANTED-OUTPUT", "PLANTED-FINAL")
        }
        kinds = {marker: items[index][0] for marker, index in where.items()}
        assert kinds == {
            "PLANTED-USER": "user",
            "PLANTED-ASSISTANT": "assistant",
            "PLANTED-OUTPUT": "result",
            "PLANTED-FINAL": "assistant",
        }, items
        calls = [i for i, (kind, text) in enumerate(items) if kind == "call"]
        assert calls and "cat notes.txt" in items[calls[0]][1], items
        assert items[calls[0]][1].startswith(self.shell_tool), items
        order = [where["PLANTED-USER"], where["PLANTED-ASSISTANT"], calls[0]]
        order += [where["PLANTED-OUTPUT"], where["PLANTED-FINAL"]]
        assert order == sorted(order), items
        # the prompt is the last user message, and the history is not pasted into it
        prompt_index = max(i for i, (kind, text) in enumerate(items) if PROMPT in text)
        assert items[prompt_index][0] == "user", items
        assert prompt_index > where["PLANTED-FINAL"], items
        assert not any(kind == "user" for kind, _ in items[prompt_index + 1 :]), items
        assert "PLANTED" not in items[prompt_index][1], items[prompt_index]
        assert sum("PLANTED-OUTPUT" in t for t in texts) == 1, items

        attempt = run.attempt
        assert attempt["outcome"] == "pass", run.describe()
        assert attempt["history"] == "history.yaml"
        assert attempt["history_sha256"] == hashlib.sha256(history.read_bytes()).hexdigest()
        saved = json.dumps(attempt["transcript"])
        assert "PLANTED" not in saved and "cat notes.txt" not in saved, attempt["transcript"]
        tools = [t for t in attempt["transcript"] if t["role"] == "tool"]
        assert len(tools) == 1 and "NEW-OUTPUT" in json.dumps(tools[0]["tool_input"]), tools
        assert attempt["final_answer"] == "STEP-TWO-DONE"
