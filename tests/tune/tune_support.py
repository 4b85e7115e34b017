"""Shared pieces of the ``caliper tune`` end-to-end tests (imported as ``tune_support``).

The scripted "model" loads the skill only when the description it was shown holds a key
phrase and the user's prompt is one the skill serves; the scripted proposer (recognised by
:data:`caliper.tune.proposer.PROPOSER_MARKER`) answers with fixed candidate descriptions,
chosen by the current description it is shown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from caliper.testing.harness import AgentCli, CaliperRun, FakeRealHome, run_caliper_process
from caliper.testing.model_server import ModelServer

SKILL = "invoice-totals"
ORIGINAL = "Helps with documents."
PRECISE = "Totals bills and reconciles ledgers (ledger-keeping: sums, VAT, due dates)."
"""Holds the key phrase ``ledger-keeping``: the scripted model then loads the skill for
invoice prompts and only for them."""
EAGER = "Helps with anything at all: documents, bills, poems, everything."
"""Holds ``anything at all``: the scripted model then loads the skill for every prompt."""
LUCKY = "Helps with documents, maybe bills."
"""Holds ``maybe bills``: the scripted model loads the skill on two attempts only, ever
(a win on train by luck: it looks like +17 points on train)."""

TRIGGER_PROMPTS = [
    "Add up the invoice in bills.csv and tell me the total.",
    "Which invoice in march.csv is overdue?",
    "Reconcile this invoice against the bank export.",
    "Compute VAT for the attached invoice.",
    "Is invoice 2041 paid already?",
]
OTHER_PROMPTS = [
    "Write a haiku about autumn leaves.",
    "Rename the variable foo to bar in main.py.",
    "Explain what a monad is in two sentences.",
    "Draft a polite reply declining the meeting.",
    "Why does my Python loop never end?",
]


def probe_file(folder: Path, per_kind: int = 5) -> Path:
    """A probe file: ``per_kind`` invoice prompts that should load the skill, as many that
    should not."""
    probes = [{"prompt": p, "should_trigger": True} for p in TRIGGER_PROMPTS[:per_kind]]
    probes += [{"prompt": p, "should_trigger": False} for p in OTHER_PROMPTS[:per_kind]]
    path = folder / f"{SKILL}.probes.yaml"
    path.write_text(yaml.safe_dump({"skill": SKILL, "probes": probes}, sort_keys=False), "utf-8")
    return path


SKILL_TEXT = (
    "---\n"
    f"name: {SKILL}\n"
    "# the description is what the agent sees\n"
    f"description: {ORIGINAL}\n"
    "license: MIT\n"
    "metadata:\n"
    "  owner: accounts\n"
    "---\n"
    "# Invoice totals\n"
    "\n"
    "Sum the `amount` column; report VAT separately.   \n"
)


def skill_dir(folder: Path) -> Path:
    """The skill under tuning, with extra frontmatter and a body that must survive."""
    path = folder / "skills" / SKILL
    path.mkdir(parents=True)
    (path / "SKILL.md").write_text(SKILL_TEXT, encoding="utf-8")
    (path / "reference.md").write_text("VAT is 20 %.\n", encoding="utf-8")
    return path


def proposals(*descriptions: str) -> str:
    """A proposer answer in the documented JSON form, wrapped in prose like real models."""
    return "Here you go:\n```json\n" + json.dumps({"descriptions": list(descriptions)}) + "\n```"


def script(
    load_call: Mapping[str, Any],
    proposer_rules: Sequence[Mapping[str, Any]],
    *,
    aux: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The scripted model: ``aux`` rules, the proposer, then the skill-loading rules.

    ``load_call`` is the tool call the agent's model makes to load the skill.
    """
    first_turn = {"has_tool_results": False}
    load = {"text": "Loading the skill.", "tool_calls": [dict(load_call)]}
    rules = [
        *aux,
        *proposer_rules,
        # precise: invoice prompts only
        {
            "when": {
                **first_turn,
                "request_contains": "ledger-keeping",
                "user_text_contains": "nvoice",
            },
            **load,
        },
        # eager: every prompt
        {"when": {**first_turn, "request_contains": "anything at all"}, **load},
        # lucky: twice, ever
        {
            "when": {
                **first_turn,
                "request_contains": "maybe bills",
                "user_text_contains": "nvoice",
            },
            "times": 2,
            **load,
        },
        {"when": {"has_tool_results": True}, "text": "Done with the skill."},
    ]
    return {"rules": rules, "fallback_text": "Here is my answer, no skill needed."}


def proposer_rule(current: str, answer: str) -> dict[str, Any]:
    """Answer the proposer with ``answer`` when the incumbent shown is ``current``."""
    return {"when": {"request_contains": f"Current description: {current}\n"}, "text": answer}


def run_tune(
    root: Path,
    cli: AgentCli,
    server: ModelServer,
    engine: str,
    env: Mapping[str, str],
    *args: str,
    timeout: float = 240,
) -> CaliperRun:
    """``caliper tune`` in ``root/project`` against ``server``."""
    project = root / "project"
    project.mkdir(exist_ok=True)
    return run_caliper_process(
        "tune",
        *args,
        "--model",
        engine,
        home=FakeRealHome(root / "real-home"),
        cwd=project,
        sandbox_parent=root / "sandboxes",
        env=dict(env),
        path=cli.path_env(),
        timeout=timeout,
    )


def configure_pi(home: Path, server_url: str) -> None:
    """The user's pi setup: a provider pointing at the scripted server (Chat Completions)."""
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    models = {
        "providers": {
            "fake": {
                "baseUrl": f"{server_url}/v1",
                "api": "openai-completions",
                "apiKey": "sk-tune",
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 4096}],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models), encoding="utf-8")
    settings = {"defaultProvider": "fake", "defaultModel": "fake-model"}
    (agent / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


CODEX_KEY_VARIABLE = "CALIPER_TUNE_CODEX_KEY"


def configure_codex(home: Path, server_url: str) -> dict[str, str]:
    """The user's Codex setup: a custom provider pointing at the scripted server (Responses
    API), its key from an ``env_key`` variable; returns the env the caliper process needs."""
    (home / ".cache").mkdir(parents=True, exist_ok=True)
    folder = home / ".codex"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(
        f"""model = "gpt-5.5"
model_provider = "scripted"

[model_providers.scripted]
name = "Scripted test server"
base_url = "{server_url}/v1"
wire_api = "responses"
env_key = "{CODEX_KEY_VARIABLE}"
request_max_retries = 0
stream_max_retries = 0
""",
        encoding="utf-8",
    )
    return {CODEX_KEY_VARIABLE: "sk-test"}
