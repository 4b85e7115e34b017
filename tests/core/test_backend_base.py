"""The shared installer base backends build on."""

from __future__ import annotations

import stat

import attrs
import pytest

import caliper
from caliper.commands.update_cli import gather_updates
from caliper.errors import CaliperError
from caliper.host.plugins import PluginHost
from caliper.plugin.agent_ending import AgentEnding, status_for_http, stopped_early
from caliper.plugin.attempt import AgentStatus, AttemptRequest, AttemptResult, PromptRequest
from caliper.plugin.backend import Backend, CliUpdate, FolderSkillInstaller, copy_user_skills
from caliper.plugin.mcp_unusable import unusable_mcp_message
from caliper.plugin.private_files import copy_private, write_private, write_secret_file
from caliper.plugin.sandbox import make_sandbox, remove_sandbox
from caliper.plugin.skills import ResolvedSkill
from caliper.system.process import ProcessResult


class _Installer(FolderSkillInstaller):
    id = "x"

    def skills_root(self, sandbox):
        return sandbox.home / ".x" / "skills"


def _skill(tmp_path, name):
    folder = tmp_path / f"src-{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\nbody\n")
    return ResolvedSkill(name, "d", folder)


def test_installs_each_skill_under_its_name(tmp_path):
    sandbox = make_sandbox(spec_dir=tmp_path, parent=tmp_path)
    try:
        installed = _Installer().install([_skill(tmp_path, "a"), _skill(tmp_path, "b")], sandbox)
        assert [i.skill_file for i in installed] == [
            sandbox.home / ".x" / "skills" / n / "SKILL.md" for n in ("a", "b")
        ]
        assert all(i.skill_file.read_text().endswith("body\n") for i in installed)
    finally:
        remove_sandbox(sandbox)


@pytest.mark.parametrize("name", ["", "..", "a/b", ".hidden"])
def test_a_name_that_is_not_one_folder_is_refused(tmp_path, name):
    sandbox = make_sandbox(spec_dir=tmp_path, parent=tmp_path)
    try:
        with pytest.raises(CaliperError, match="cannot be a folder name"):
            _Installer().install([_skill(tmp_path, name)], sandbox)
    finally:
        remove_sandbox(sandbox)


# -- the template pieces every backend shares -------------------------------------------------
def _ended(*, timed_out: bool = False, interrupted: bool = False) -> ProcessResult:
    return ProcessResult(("x",), None if timed_out else 0, "", "", timed_out, interrupted, 1.0)


def test_stopped_early_is_timeout_or_interrupt_else_nothing():
    timed = stopped_early(_ended(timed_out=True), agent="Agent", timeout=30, detail="Retrying.")
    assert timed == AgentEnding(
        AgentStatus.TIMEOUT, "Agent did not finish within 30s and was stopped. Retrying."
    )
    stopped = stopped_early(_ended(interrupted=True), agent="Agent", timeout=30)
    assert stopped is not None and stopped.status is AgentStatus.INFRA_ERROR
    assert stopped_early(_ended(), agent="Agent", timeout=30) is None


@pytest.mark.parametrize(
    ("code", "status"),
    [(401, "setup_error"), (402, "setup_error"), (403, "setup_error"), (404, "setup_error"),
     (400, "infra_error"), (408, "infra_error"), (409, "infra_error"), (429, "infra_error"),
     (500, "infra_error"), (503, "infra_error"), (529, "infra_error"), (None, "infra_error")],
)  # fmt: skip
def test_one_http_status_table(code, status):
    assert status_for_http(code).value == status


def test_an_ending_gives_a_prompt_answer_only_when_completed():
    assert AgentEnding(AgentStatus.COMPLETED).prompt_result("yes", model="m").text == "yes"
    refused = AgentEnding(AgentStatus.SETUP_ERROR, "no login").prompt_result("yes", model="m")
    assert refused.text is None and refused.error == "no login" and refused.model == "m"


def test_private_files_are_0600_even_over_an_existing_file(tmp_path):
    path = tmp_path / "deep" / "config.json"
    path.parent.mkdir()
    path.write_text("old")
    path.chmod(0o644)
    write_private(path, "new")
    assert path.read_text() == "new" and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert copy_private(tmp_path / "missing", tmp_path / "copy") is False
    assert copy_private(path, tmp_path / "login" / "copy") is True
    assert stat.S_IMODE((tmp_path / "login" / "copy").stat().st_mode) == 0o600


def test_secret_files_go_only_into_the_private_folder(tmp_path):
    sandbox = make_sandbox(spec_dir=tmp_path, parent=tmp_path)
    try:
        written = write_secret_file(sandbox, "mcp.json", b"{}")
        assert written.parent == sandbox.private
        for name in ("../escape.json", "a/b", "..", ""):
            with pytest.raises(ValueError):
                write_secret_file(sandbox, name, "x")
        assert not (sandbox.root / "escape.json").exists()
    finally:
        remove_sandbox(sandbox)


def test_user_skills_declared_win_first_source_wins_hidden_skipped(tmp_path):
    def skill(folder, name, body):
        (folder / name).mkdir(parents=True)
        (folder / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\n{body}")

    first, second, root = tmp_path / "first", tmp_path / "second", tmp_path / "root"
    skill(root, "declared", "mine")
    skill(first, "declared", "theirs")
    skill(first, "shared", "from first")
    skill(first, ".hidden", "x")
    skill(second, "shared", "from second")
    skill(second, "extra", "e")
    (second / "not-a-skill").mkdir()
    copied = copy_user_skills([first, second, tmp_path / "absent"], root)
    assert copied.names == ("shared", "extra")
    assert copied.notes == ("user skill declared: a declared skill of that name wins",)
    assert (root / "declared" / "SKILL.md").read_text().endswith("mine")
    assert (root / "shared" / "SKILL.md").read_text().endswith("from first")
    assert not (root / ".hidden").exists() and not (root / "not-a-skill").exists()


def test_unusable_mcp_message_names_each_server_and_the_reason():
    one = unusable_mcp_message("Agent", [("remote", "401 Unauthorized")])
    assert one.startswith("Agent could not use the spec's MCP server 'remote' (401 Unauthorized):")
    assert "without its tools" in one
    two = unusable_mcp_message("Agent", [("a", None), ("b", "down")], look_closer="Run x.")
    assert "MCP servers 'a', 'b' (down):" in two and "their tools" in two
    assert two.endswith(" Run x.")


class _Template(Backend):
    id = "template"
    cli_name = "caliper-template-cli"

    def attempt(self, cli, request):
        return AttemptResult(status=AgentStatus.COMPLETED, final_answer=str(cli))


def test_the_template_finds_the_cli_once_and_reports_a_missing_one(tmp_path, monkeypatch):
    sandbox = make_sandbox(spec_dir=tmp_path, parent=tmp_path)
    try:
        monkeypatch.setenv("CALIPER_TEMPLATE_CLI_CLI_PATH", str(tmp_path / "absent"))
        request = AttemptRequest(prompt="p", model=None, sandbox=sandbox, timeout=5)
        missing = _Template().run_attempt(request)
        assert missing.status is AgentStatus.SETUP_ERROR
        assert "caliper-template-cli" in (missing.error or "")
        question = PromptRequest(prompt="p", model=None, sandbox=sandbox, timeout=5)
        # a backend that cannot judge says so first: installing its CLI would not help
        with pytest.raises(NotImplementedError, match="cannot be used as a judge engine"):
            _Template().run_prompt(question)
        found = tmp_path / "found"
        ran = _Template().run_attempt(attrs.evolve(request, cli_path=found))
        assert ran.final_answer == str(found)
        with pytest.raises(NotImplementedError, match="cannot be used as a judge engine"):
            _Template().run_prompt(attrs.evolve(question, cli_path=found))
    finally:
        remove_sandbox(sandbox)


class _OwnUpdate(_Template):
    id = "own-update"

    def update_info(self, check_latest):
        return CliUpdate(self.id, "1.0", None, "upgrade-own", note=f"latest={check_latest}")


class _HookPlugin:
    """A plugin written before ``Backend.update_info``: it answers through the hook."""

    @staticmethod
    @caliper.hookimpl
    def register_backends(register):
        register(_Template())
        register(_OwnUpdate())

    @staticmethod
    @caliper.hookimpl
    def cli_update_info(backend, check_latest):
        if backend.id in ("template", "own-update"):
            return CliUpdate(backend.id, "0.9", None, "upgrade-by-hook")
        return None


def test_update_cli_asks_the_backend_method_first_then_the_hook(monkeypatch, tmp_path):
    monkeypatch.setenv("CALIPER_TEMPLATE_CLI_CLI_PATH", str(tmp_path / "absent"))
    host = PluginHost([_HookPlugin()], use_entry_points=False)
    updates = {u.backend: u for u in gather_updates(host, [], check_latest=False)}
    assert updates["own-update"].update_command == "upgrade-own"  # the method wins
    assert updates["own-update"].note == "latest=False"
    assert updates["template"].update_command == "upgrade-by-hook"  # the hook still works
