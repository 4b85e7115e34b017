"""A scripted stand-in for an agent CLI, run as a real subprocess by the ``fake`` backend.

It reads the prompt on stdin and obeys every line that starts with ``fake:`` (in the prompt,
then in ``fake-scenario.txt`` in its working directory, if a task's setup wrote one). It
prints one JSON event per line, like real agent CLIs' stream modes do:

* ``say TEXT`` – assistant text (the last one is the final answer)
* ``load NAME`` – load a skill, only if installed under ``$HOME/.fake-agent/skills/NAME``
* ``read PATH`` / ``write PATH TEXT`` / ``bash COMMAND`` – tool calls
* ``env VAR`` / ``mcp`` – say an environment variable / the MCP config file it was given
* ``sleep SECONDS`` – wait (for timeouts)
* ``grandchild PIDFILE`` – start a process that sleeps forever, write its pid to PIDFILE
* ``stderr TEXT`` – write TEXT to stderr (``\\x1b`` and other backslash escapes decoded)
* ``exit CODE`` – crash with that exit code and no result
* ``rate-limit [RETRY_AFTER]`` / ``auth-fail [MESSAGE]`` – report a provider error and exit 1
* ``coin P COUNTFILE`` – write ``coin.txt`` with probability P, drawn from a generator seeded
  by COUNTFILE's file name and how many runs it has counted (seeded pass rates)
* ``rate-limit-first N COUNTFILE [RETRY_AFTER]`` – rate-limited for the first N runs that
  share COUNTFILE (an absolute path that counts them), then carry on
* ``garbage`` – print output that is not JSON and exit 0
* ``max-turns`` – end with a ``max_turns`` result
* ``usage IN OUT [CACHE_READ CACHE_WRITE]`` / ``model NAME`` – what to report at the end
* ``cost USD`` – report that cost (``cost_usd``) with the usage at the end
* ``only-model MODEL ACTION …`` – do ACTION only when the agent runs as MODEL (``--model``)
* ``if-skill NAME ACTION …`` / ``unless-skill NAME ACTION …`` – do ACTION only when the skill
  NAME is (is not) installed (so a control arm without it behaves differently)

Given a judge prompt (it carries ``caliper.plugin.judge.LLM_JUDGE_MARKER``) it answers with a JSON
verdict instead, as a ``fake-judge: pass|fail|garbage|sleep`` directive in the prompt says.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from caliper.plugin.judge import LLM_JUDGE_MARKER

DEFAULT_MODEL = "fake-model-1"
JUDGE_DIRECTIVE = re.compile(r"fake-judge:\s*(pass|fail|garbage|sleep)")
SCENARIO_FILE = "fake-scenario.txt"
PREFIX = "fake:"


def _unescape(text: str) -> str:
    """``text`` with backslash escapes (``\\x1b``, ``\\a``) turned into the characters."""
    return text.encode("ascii", "backslashreplace").decode("unicode_escape")


def emit(event: dict) -> None:
    """Print one JSON event line and flush (so a kill never loses earlier events)."""
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def instructions(prompt: str) -> list[str]:
    """The ``fake:`` lines of the prompt, then of the scenario file."""
    lines = prompt.splitlines()
    scenario = Path(SCENARIO_FILE)
    if scenario.is_file():
        lines += scenario.read_text(encoding="utf-8").splitlines()
    return [
        line.strip()[len(PREFIX) :].strip() for line in lines if line.strip().startswith(PREFIX)
    ]


def _skills_root() -> Path:
    return Path(os.environ.get("HOME", ".")) / ".fake-agent" / "skills"


class Agent:
    """The fake agent's state while it works through its instructions."""

    def __init__(self, model: str | None, mcp_config: str | None):
        self.model = model or DEFAULT_MODEL
        self.mcp_config = mcp_config
        self.final = ""
        self.usage: dict[str, int | float] = {}

    def say(self, text: str) -> None:
        self.final = text
        emit({"type": "text", "text": text})

    def tool(self, name: str, tool_input: dict, output: str, is_error: bool = False) -> None:
        emit(
            {
                "type": "tool",
                "name": name,
                "input": tool_input,
                "output": output,
                "is_error": is_error,
            }
        )

    def do(self, action: str, rest: str) -> int | None:
        """Perform one instruction; return an exit code to stop right there."""
        handler = getattr(self, "do_" + action.replace("-", "_"), None)
        if handler is None:
            self.say(f"unknown instruction: {action}")
            return None
        return handler(rest)

    def do_say(self, rest: str) -> None:
        self.say(rest)

    def do_load(self, rest: str) -> None:
        skill = _skills_root() / rest / "SKILL.md"
        if skill.is_file():
            self.tool("Skill", {"skill": rest}, skill.read_text(encoding="utf-8"))
        else:
            self.tool("Skill", {"skill": rest}, f"no skill named {rest}", is_error=True)

    def do_read(self, rest: str) -> None:
        try:
            self.tool("Read", {"path": rest}, Path(rest).read_text(encoding="utf-8"))
        except OSError as exc:
            self.tool("Read", {"path": rest}, str(exc), is_error=True)

    def do_write(self, rest: str) -> None:
        path, _, text = rest.partition(" ")
        Path(path).write_text(text + "\n", encoding="utf-8")
        self.tool("Write", {"path": path, "content": text}, "ok")

    def do_bash(self, rest: str) -> None:
        done = subprocess.run(
            ["/bin/sh", "-c", rest], capture_output=True, text=True, timeout=60, check=False
        )
        self.tool("Bash", {"command": rest}, done.stdout + done.stderr, done.returncode != 0)

    def do_env(self, rest: str) -> None:
        self.say(os.environ.get(rest, f"<{rest} unset>"))

    def do_mcp(self, _rest: str) -> None:
        if not self.mcp_config:
            self.say("no MCP config")
            return
        self.say(Path(self.mcp_config).read_text(encoding="utf-8"))

    def do_sleep(self, rest: str) -> None:
        time.sleep(float(rest))

    def do_grandchild(self, rest: str) -> None:
        child = subprocess.Popen(
            [sys.executable, "-c", "import time\nwhile True: time.sleep(1)"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        Path(rest).write_text(str(child.pid), encoding="utf-8")
        self.tool("Bash", {"command": "sleep forever &"}, f"started {child.pid}")

    def do_stderr(self, rest: str) -> None:
        """Write ``rest`` to stderr, with backslash escapes (``\\x1b``) decoded."""
        sys.stderr.write(_unescape(rest) + "\n")
        sys.stderr.flush()

    def do_exit(self, rest: str) -> int:
        sys.stderr.write("fake agent: crashed on purpose\n")
        return int(rest or 1)

    def do_rate_limit(self, rest: str) -> int:
        event = {"type": "error", "kind": "rate_limit", "message": "429: rate limited, retry later"}
        if rest:
            event["retry_after"] = float(rest)
        emit(event)
        return 1

    def do_coin(self, rest: str) -> None:
        import fcntl
        import random

        chance, path = rest.split()
        with open(path, "a+", encoding="utf-8") as counter:  # parallel attempts: locked
            fcntl.flock(counter, fcntl.LOCK_EX)
            counter.seek(0)
            seen = int(counter.read() or 0)
            counter.seek(0)
            counter.truncate()
            counter.write(str(seen + 1))
        if random.Random(f"{Path(path).name}:{seen}").random() < float(chance):
            self.do_write("coin.txt heads")

    def do_rate_limit_first(self, rest: str) -> int | None:
        count, path, *after = rest.split()
        counter = Path(path)
        seen = int(counter.read_text() or 0) if counter.is_file() else 0
        counter.write_text(str(seen + 1))
        if seen < int(count):
            return self.do_rate_limit(" ".join(after))
        return None

    def do_auth_fail(self, rest: str) -> int:
        message = _unescape(rest) if rest else "not logged in: run `fake-agent login`"
        emit({"type": "error", "kind": "auth", "message": message})
        return 1

    def do_garbage(self, _rest: str) -> int:
        sys.stdout.write("<<<%%% this is not json %%%>>>\n\x00\x01 garbage\n")
        sys.stdout.flush()
        return 0

    def do_max_turns(self, _rest: str) -> int:
        self.result("max_turns")
        return 0

    def do_usage(self, rest: str) -> None:
        numbers = [int(n) for n in rest.split()]
        keys = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
        self.usage.update(zip(keys, numbers, strict=False))

    def do_cost(self, rest: str) -> None:
        self.usage["cost_usd"] = float(rest)

    def do_model(self, rest: str) -> None:
        self.model = rest

    def do_only_model(self, rest: str) -> int | None:
        """``only-model MODEL ACTION [ARGS]``: do ACTION only when running as MODEL (so one
        spec behaves differently per engine of a matrix)."""
        model, _, instruction = rest.partition(" ")
        if model != self.model:
            return None
        action, _, args = instruction.strip().partition(" ")
        return self.do(action, args.strip())

    def do_if_skill(self, rest: str) -> int | None:
        """``if-skill NAME ACTION [ARGS]``: do ACTION only when skill NAME is installed."""
        name, _, instruction = rest.partition(" ")
        if not (_skills_root() / name / "SKILL.md").is_file():
            return None
        action, _, args = instruction.strip().partition(" ")
        return self.do(action, args.strip())

    def do_unless_skill(self, rest: str) -> int | None:
        """``unless-skill NAME ACTION [ARGS]``: do ACTION only when skill NAME is not installed."""
        name, _, instruction = rest.partition(" ")
        if (_skills_root() / name / "SKILL.md").is_file():
            return None
        action, _, args = instruction.strip().partition(" ")
        return self.do(action, args.strip())

    def result(self, status: str) -> None:
        emit(
            {
                "type": "result",
                "status": status,
                "text": self.final,
                "usage": self.usage,
                "model": self.model,
            }
        )


def judge(agent: Agent, prompt: str) -> int:
    """Answer a judge request as the ``fake-judge: WORD`` directive in it says (default pass).

    The directive travels inside the task's ``expect:`` text, which every judge prompt quotes.
    """
    found = JUDGE_DIRECTIVE.search(prompt)
    word = found.group(1) if found else "pass"
    if word == "sleep":
        time.sleep(60)
    if word == "garbage":
        agent.say("I would rather not say.")
    else:
        agent.say(json.dumps({"passed": word == "pass", "reasoning": f"fake judge: {word}"}))
    agent.usage = {"input_tokens": len(prompt) // 4, "output_tokens": 12}
    agent.result("success")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Console script ``fake-agent``: ``fake-agent [--model M] [--mcp-config FILE]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--version"]:
        print("fake-agent 0.1.0")
        return 0
    options: dict[str, str] = {}
    while args:
        flag = args.pop(0)
        if flag in ("--model", "--mcp-config") and args:
            options[flag] = args.pop(0)
    agent = Agent(options.get("--model"), options.get("--mcp-config"))
    emit({"type": "init", "model": agent.model, "cwd": os.getcwd()})
    prompt = sys.stdin.read()
    if LLM_JUDGE_MARKER in prompt:
        return judge(agent, prompt)
    for line in instructions(prompt):
        action, _, rest = line.partition(" ")
        code = agent.do(action, rest.strip())
        if code is not None:
            return code
    if not agent.final:
        agent.say("ok")
    agent.result("success")
    return 0


if __name__ == "__main__":
    sys.exit(main())
