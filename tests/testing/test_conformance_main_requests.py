"""The kit finds the main conversation even when a side call comes first (opencode's title
request without ``--title``), instead of taking the first request the server saw."""

from __future__ import annotations

import json
import urllib.request

from caliper.testing.conformance import main_requests
from caliper.testing.model_server import ModelServer

PROMPT = "Please do my alpha chores. [activate-alpha]"
TOOLS = [{"type": "function", "function": {"name": "skill", "parameters": {"type": "object"}}}]


def chat(server: ModelServer, text: str, *, tools: bool, title: bool = False) -> None:
    messages = [{"role": "user", "content": text}]
    if title:
        messages.insert(0, {"role": "system", "content": "Generate a title for this chat."})
    body = {"model": "m", "messages": messages, **({"tools": TOOLS} if tools else {})}
    req = urllib.request.Request(
        server.openai_base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        resp.read()


def test_a_tool_less_side_call_before_the_conversation_is_not_the_main_one() -> None:
    with ModelServer({"turns": [{"text": "ok"}]}) as server:
        chat(server, PROMPT, tools=False, title=True)  # the title request comes first
        chat(server, "unrelated quota probe", tools=True)
        chat(server, PROMPT, tools=True)
        chat(server, PROMPT, tools=True)
        main = main_requests(server, PROMPT)
        assert [r.index for r in main] == [2, 3]
        assert server.model_requests()[0].index not in [r.index for r in main]


def test_without_tools_anywhere_the_requests_carrying_the_prompt_are_the_conversation() -> None:
    with ModelServer({"turns": [{"text": "ok"}]}) as server:
        chat(server, "something else", tools=False)
        chat(server, PROMPT, tools=False)
        assert [r.index for r in main_requests(server, PROMPT)] == [1]
