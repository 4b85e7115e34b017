"""The pages on real saved runs: each backend's real agent CLI against the scripted model
server, run through ``caliper run``, then rendered and opened in headless Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from html_support import caliper
from selenium.webdriver.common.by import By

from caliper.testing.conformance import BackendConformance, ConformanceKit, ToolCall
from caliper.testing.harness import FakeRealHome
from caliper_backend_claude.testing import ClaudeScripted
from caliper_backend_codex.testing import CodexScripted
from caliper_backend_hermes.testing import HermesScripted
from caliper_backend_pi.testing import PiScripted

pytest_plugins = ["caliper.testing.fixtures"]

pytestmark = pytest.mark.e2e

MARKUP = "<script>alert(1)</script></textarea><img src=x onerror=alert(1)>"


def _call(call: ToolCall) -> dict[str, Any]:
    data: dict[str, Any] = {"name": call.name, "arguments": dict(call.arguments)}
    if getattr(call, "namespace", None):
        data["namespace"] = call.namespace
    return data


def _two_runs(suite: BackendConformance, kit: ConformanceKit) -> list[Path]:
    """Run a two-task spec twice through the real CLI; return the saved results files."""
    skills = [kit.skill("alpha-target"), kit.skill("beta-neighbour")]
    # the judge's rule first: Hermes' catch-all for tool-less calls would answer it otherwise
    judge = {
        "when": {"judge": True},
        "text": '{"passed": false, "reasoning": "The answer says 41, not 42."}',
    }
    script = {
        "turns": [],
        "rules": [
            judge,
            *suite.aux_rules(),
            {
                "when": {"user_text_contains": "[activate-alpha]"},
                "turns": [
                    {
                        "text": "Loading the alpha skill.",
                        "tool_calls": [_call(suite.activate_skill_call("alpha-target"))],
                    },
                    {"tool_calls": [_call(suite.shell_call("printf 'OUT-%s' 42 | tee out.txt"))]},
                    {"text": "Alpha chores done."},
                ],
            },
            {
                "when": {"user_text_contains": "[judged]"},
                "turns": [{"text": "It is 41."}],
            },
            {
                "when": {"user_text_contains": "[plain]"},
                "turns": [{"text": f"I will not write the file. {MARKUP}"}],
            },
        ],
    }
    server = kit.server(script)
    spec = kit.spec(
        [
            {
                "name": "alpha chores",
                "prompt": "Please do my alpha chores. [activate-alpha]",
                "activates": ["alpha-target"],
                "assert": "assert open('out.txt').read() == 'OUT-42'",
            },
            {
                "name": "plain",
                "prompt": "Answer plainly. [plain]",
                "activates": [],
                "assert": "import os\nassert os.path.exists('missing.txt'), 'missing.txt was "
                "never written'",
            },
            {"name": "judged", "prompt": "Six times seven? [judged]", "expect": "Says 42."},
        ],
        skills=skills,
    )
    paths = []
    for k in ("2", "1"):
        done = kit.run(spec, server, "--k", k, "--judge-model", suite.engine())
        assert done.results_path is not None, done.describe()
        paths.append(done.results_path)
    return paths


SUITES = [ClaudeScripted(), CodexScripted(), PiScripted(), HermesScripted()]


@pytest.mark.slow
@pytest.mark.parametrize("suite", SUITES, ids=lambda s: s.backend_id)
def test_pages_on_real_runs(suite, tmp_path, agent_cli, browser):
    cli = agent_cli(suite.cli or suite.backend_id)
    kit = ConformanceKit(suite, tmp_path, FakeRealHome(tmp_path / "real-home"), cli)
    try:
        first, second = _two_runs(suite, kit)
    finally:
        kit.close()
    project = kit.project
    name = suite.backend_id

    page = tmp_path / f"{name}-run.html"
    done = caliper("report", str(first), "--format", "html", "-o", str(page), cwd=project)
    assert done.returncode == 0, done.stderr
    browser.open(page)
    driver = browser.driver
    # alpha passes; plain fails its assert; judged fails the LLM judge: mean of 1, 0, 0
    assert driver.find_element(By.ID, "score").text == "33.3%"
    assert driver.find_element(By.ID, "engine").text.startswith(name)
    driver.find_element(By.CSS_SELECTOR, '#tasks tr[data-name="alpha chores"] button.att').click()
    viewer = driver.find_element(By.ID, "viewer")
    tools = viewer.find_elements(By.CSS_SELECTOR, ".turn.tool details")
    assert tools, f"no tool call shown for {name}"
    for box in tools:
        box.find_element(By.TAG_NAME, "summary").click()
    outputs = [p.text for p in viewer.find_elements(By.CSS_SELECTOR, "pre.tool-output")]
    assert any("OUT-42" in o for o in outputs), outputs
    assert viewer.find_elements(By.CSS_SELECTOR, ".turn.skill-load"), "skill load not marked"
    assert "Alpha chores done." in viewer.find_element(By.CSS_SELECTOR, ".final-answer").text
    browser.screenshot(f"real-{name}-transcript")
    driver.find_element(By.CSS_SELECTOR, '#tasks tr[data-name="plain"] button.att').click()
    assert MARKUP in viewer.find_element(By.CSS_SELECTOR, ".final-answer").text
    reason = viewer.find_element(By.CSS_SELECTOR, '.check[data-key="assert"]').text
    assert "missing.txt was never written" in reason
    assert browser.alert_text() is None and driver.find_elements(By.TAG_NAME, "img") == []
    driver.find_element(By.CSS_SELECTOR, '#tasks tr[data-name="judged"] button.att').click()
    check = viewer.find_element(By.CSS_SELECTOR, '.check[data-key="expect"]')
    assert f"(judge {name}" in check.text, check.text
    assert check.find_element(By.CSS_SELECTOR, "pre.judge-reasoning").text == (
        "The answer says 41, not 42."
    )
    assert browser.console_errors() == []

    compare = tmp_path / f"{name}-compare.html"
    done = caliper(
        "compare", str(first), str(second), "--format", "html", "-o", str(compare), cwd=project
    )
    assert done.returncode in (0, 1), done.stderr
    browser.open(compare)
    rows = driver.find_elements(By.CSS_SELECTOR, "#compare-tasks tr.cmp-row")
    assert [r.get_attribute("data-name") for r in rows] == ["alpha chores", "plain", "judged"]
    assert browser.console_errors() == []

    history = tmp_path / f"{name}-history.html"
    done = caliper("history", "conf", "--format", "html", "-o", str(history), cwd=project)
    assert done.returncode == 0, done.stderr
    browser.open(history)
    assert len(driver.find_elements(By.CSS_SELECTOR, "#score-section circle.dot")) == 2
    assert browser.console_errors() == []
    browser.screenshot(f"real-{name}-history")
