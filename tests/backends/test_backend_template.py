"""What every built-in backend gets from the core template, checked on all four alike.

Lazy plugin modules, the shared installer's path-safety check, and a missing CLI reported as a
``SETUP_ERROR`` result (never raised), for attempts and judge prompts.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from caliper.errors import CaliperError
from caliper.plugin.attempt import AgentStatus, AttemptRequest, PromptRequest
from caliper.plugin.sandbox import make_sandbox, remove_sandbox
from caliper.plugin.skills import ResolvedSkill

PACKAGES = {
    "claude": ("caliper_backend_claude", "ClaudeCodeBackend", "ClaudeSkillInstaller"),
    "codex": ("caliper_backend_codex", "CodexBackend", "CodexSkillInstaller"),
    "pi": ("caliper_backend_pi", "PiBackend", "PiSkillInstaller"),
    "hermes": ("caliper_backend_hermes", "HermesBackend", "HermesSkillInstaller"),
}
INSTALLER_MODULES = {"claude": "skills", "codex": "skills", "pi": "skills", "hermes": "skills"}


def _backend(name: str):  # type: ignore[no-untyped-def]
    package, cls, _ = PACKAGES[name]
    module = __import__(f"{package}.backend", fromlist=[cls])
    return getattr(module, cls)()


def _installer(name: str):  # type: ignore[no-untyped-def]
    package, _, cls = PACKAGES[name]
    module = __import__(f"{package}.{INSTALLER_MODULES[name]}", fromlist=[cls])
    return getattr(module, cls)()


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_importing_the_plugin_module_imports_nothing_heavy(name: str) -> None:
    """The entry-point module is all ``caliper plugins`` and alias lookups import: the
    backend's implementation modules load only when a hook asks for them."""
    package = PACKAGES[name][0]
    code = (
        "import sys\n"
        f"import {package}.plugin\n"
        f"print(sorted(m for m in sys.modules if m.startswith('{package}.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == f"['{package}.plugin']", done.stdout


@pytest.mark.parametrize("name", sorted(PACKAGES))
@pytest.mark.parametrize("hostile", ["../escape", "a/b", "..", ".hidden", ""])
def test_a_skill_name_that_is_not_one_folder_is_refused(
    name: str, hostile: str, tmp_path: Path
) -> None:
    """Every backend's installer goes through the core's check: nothing lands outside it."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "SKILL.md").write_text("---\nname: ok\ndescription: d\n---\nbody\n")
    sandbox = make_sandbox(spec_dir=tmp_path, parent=tmp_path)
    try:
        with pytest.raises(CaliperError, match="cannot be a folder name"):
            _installer(name).install([ResolvedSkill(hostile, "d", source)], sandbox)
        assert not (tmp_path / "escape").exists()
        assert not any(p.name == "SKILL.md" for p in sandbox.root.rglob("*"))
    finally:
        remove_sandbox(sandbox)


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_a_missing_cli_is_a_setup_error_result(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No backend raises for a missing CLI: attempt and judge prompt both come back as
    ``SETUP_ERROR`` with the install hint."""
    backend = _backend(name)
    monkeypatch.setenv(backend.cli_path_variable, str(tmp_path / "no-such-cli"))
    sandbox = make_sandbox(spec_dir=tmp_path, parent=tmp_path)
    try:
        attempt = backend.run_attempt(
            AttemptRequest(prompt="Do it.", model=None, sandbox=sandbox, timeout=30)
        )
        judged = backend.run_prompt(
            PromptRequest(prompt="Judge it.", model=None, sandbox=sandbox, timeout=30)
        )
    finally:
        remove_sandbox(sandbox)
    for result in (attempt, judged):
        assert result.status is AgentStatus.SETUP_ERROR
        assert result.error == backend.missing_cli_message()


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_the_cli_path_the_run_found_is_used(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``AttemptRequest.cli_path`` wins: the backend does not look the CLI up again."""
    backend = _backend(name)
    monkeypatch.setenv(backend.cli_path_variable, str(tmp_path / "no-such-cli"))
    found = tmp_path / "found-cli"
    request = AttemptRequest(
        prompt="x",
        model=None,
        sandbox=None,
        timeout=1,
        cli_path=found,  # type: ignore[arg-type]
    )
    assert backend.cli_for(request) == found
    assert backend.cli_for(AttemptRequest(prompt="x", model=None, sandbox=None, timeout=1)) is None  # type: ignore[arg-type]
