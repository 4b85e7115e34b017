"""The README's first two commands are the ones CI runs, word for word."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    """The non-comment lines of the README's first bash block."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_ci_runs_the_readme_setup_and_test_commands_verbatim():
    setup_and_demo, tests = readme_commands()[:2]
    assert setup_and_demo.startswith("scripts/setup ") and "caliper.testing.demo" in setup_and_demo
    assert tests == "scripts/test"
    runner = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    assert "caliper.testing.offline" in runner and ".venv/bin/pytest" in runner
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert setup_and_demo in ci
    assert tests in ci
    assert "export CALIPER_REQUIRE_E2E=1" in " ".join(ci)


def test_the_demo_echoes_the_command_as_a_user_types_it():
    """It echoed `$ run <path> …`, without the word `caliper`."""
    from caliper.testing.demo import echoed

    line = echoed(["/venv/bin/caliper", "run", "/x/my examples/hello.eval.yaml", "--k", "2"])
    assert line == "$ caliper run '/x/my examples/hello.eval.yaml' --k 2"
