"""The activation matcher: which installed skill a shell command really read."""

from __future__ import annotations

from pathlib import Path

import pytest

from caliper.plugin.attempt import InstalledSkill
from caliper.plugin.skill_reads import activated_by_reads as activated_skills
from caliper_backend_codex.activation import read_files, segments, shell_script

HOME = "/sb/home"
CODEX_HOME = "/sb/home/.codex"
ROOT = f"{CODEX_HOME}/skills"
WORK = "/sb/work"
SKILLS = [
    InstalledSkill("foo", "Foo things.", Path(ROOT) / "foo"),
    InstalledSkill("foo-extra", "More foo.", Path(ROOT) / "foo-extra"),
    InstalledSkill("bar", "Bar things.", Path(ROOT) / "bar"),
]


def activated(command: str | list[str], cwd: str = WORK) -> list[str]:
    reads = read_files(command, cwd=cwd, home=HOME, codex_home=CODEX_HOME)
    return activated_skills(reads, SKILLS)


def bash(script: str) -> str:
    """A command as ``codex exec --json`` prints it."""
    return "/bin/bash -lc " + "'" + script.replace("'", "'\"'\"'") + "'"


@pytest.mark.parametrize(
    "script",
    [
        f"cat {ROOT}/foo/SKILL.md",
        f"sed -n '1,200p' {ROOT}/foo/SKILL.md",
        f"head -n 80 {ROOT}/foo/SKILL.md",
        f"tail -50 {ROOT}/foo/SKILL.md",
        f"nl -ba {ROOT}/foo/SKILL.md",
        f"less {ROOT}/foo/SKILL.md",
        f"rg -n 'usage' {ROOT}/foo/SKILL.md",
        f"grep -n step {ROOT}/foo/SKILL.md",
        f"awk '{{print}}' {ROOT}/foo/SKILL.md",
        f'cat "{ROOT}/foo/SKILL.md"',
        "cat ~/.codex/skills/foo/SKILL.md",
        "cat $CODEX_HOME/skills/foo/SKILL.md",
        "cat ${HOME}/.codex/skills/foo/SKILL.md",
        f"cat {ROOT}/bar/../foo/SKILL.md",
        f"cd {ROOT}/foo && cat SKILL.md",
        f"cd {ROOT}\ncat foo/SKILL.md",
        f"wc -l x; cat {ROOT}/foo/SKILL.md | head -20",
        f"while read -r line; do echo $line; done < {ROOT}/foo/SKILL.md",
        f"LC_ALL=C sed -n 1,40p {ROOT}/foo/SKILL.md 2>/dev/null",
        f"cat {ROOT}/foo/SKILL.md > /tmp/copy.md",
    ],
)
def test_reading_the_skill_file_activates_it(script: str) -> None:
    assert activated(bash(script)) == ["foo"]


@pytest.mark.parametrize(
    "script",
    [
        f"ls {ROOT}",
        f"ls -la {ROOT}/foo",
        f"find {ROOT} -name SKILL.md",
        f"rg -n 'foo' {ROOT}",
        f"grep -r usage {ROOT}/foo",
        f"cat {ROOT}/foo/references/api.md",
        f"cat {ROOT}/foo/SKILL.md.bak",
        f"cat {ROOT}/foo/SKILL.mdx",
        f"cat {ROOT}/fo/SKILL.md",
        f"echo {ROOT}/foo/SKILL.md",
        f"stat {ROOT}/foo/SKILL.md",
        f"cp {ROOT}/foo/SKILL.md /tmp/x",
        f"test -f {ROOT}/foo/SKILL.md && echo yes",
        f"echo hi > {ROOT}/foo/SKILL.md",
        "cat SKILL.md",
        "cat foo/SKILL.md",
        f"cat {ROOT}/foo/SKILL.md.tmp; cd {ROOT}",
    ],
)
def test_other_commands_are_not_activation(script: str) -> None:
    assert activated(bash(script)) == []


def test_prefix_sharing_skill_is_told_apart() -> None:
    reads = read_files(bash(f"cat {ROOT}/foo-extra/SKILL.md"), cwd=WORK)
    assert activated_skills(reads, SKILLS) == ["foo-extra"]
    assert activated_skills(reads, SKILLS[:1]) == []
    reads = read_files(bash(f"cat {ROOT}/foo/SKILL.md"), cwd=WORK)
    assert activated_skills(reads, SKILLS[1:2]) == []


def test_several_skills_keep_read_order_and_count_once() -> None:
    script = f"cat {ROOT}/bar/SKILL.md {ROOT}/foo/SKILL.md; head {ROOT}/bar/SKILL.md"
    assert activated(bash(script)) == ["bar", "foo"]


def test_relative_paths_resolve_against_the_command_directory() -> None:
    assert activated(bash("cat SKILL.md"), cwd=f"{ROOT}/foo") == ["foo"]
    assert activated(bash("cat ../bar/SKILL.md"), cwd=f"{ROOT}/foo") == ["bar"]
    assert activated(bash("cat SKILL.md"), cwd=f"{ROOT}/foo-extra") == ["foo-extra"]
    assert activated(bash("cat SKILL.md"), cwd=f"{ROOT}/other") == []


def test_argv_commands_from_the_session_file() -> None:
    assert activated(["/bin/bash", "-lc", f"cat {ROOT}/foo/SKILL.md"]) == ["foo"]
    assert activated(["cat", f"{ROOT}/bar/SKILL.md"]) == ["bar"]


def test_unbalanced_quotes_do_not_crash() -> None:
    assert activated(bash(f"cat {ROOT}/foo/SKILL.md 'oops")) == ["foo"]


def test_symlinked_root_matches_real_path(tmp_path: Path) -> None:
    real = tmp_path / "real" / "skills" / "foo"
    real.mkdir(parents=True)
    (real / "SKILL.md").write_text("---\nname: foo\n---\n")
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "real")
    skill = InstalledSkill("foo", "", real)
    reads = read_files(bash(f"cat {link}/skills/foo/SKILL.md"), cwd=str(tmp_path))
    assert activated_skills(reads, [skill]) == ["foo"]


def test_shell_wrapper_is_unwrapped() -> None:
    assert shell_script(bash("cat a; cat b")) == "cat a; cat b"
    assert shell_script("cat a") == "cat a"
    assert segments("cat a && sed -n 1p b | head\ncd /x") == [
        ["cat", "a"],
        ["sed", "-n", "1p", "b"],
        ["head"],
        ["cd", "/x"],
    ]
