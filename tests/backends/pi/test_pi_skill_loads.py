"""Which reads count as skill loads on pi (issue 11 items 1 and 2)."""

from __future__ import annotations

from pathlib import Path

from caliper.plugin.attempt import InstalledSkill
from caliper_backend_pi.activation import activated_skills, undeclared_skills
from caliper_backend_pi.events import ToolCall


def _skills(tmp_path: Path) -> tuple[Path, list[InstalledSkill]]:
    root = tmp_path / "home" / ".pi" / "agent" / "skills"
    made = []
    for name in ("alpha", "beta"):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\n")
        made.append(InstalledSkill(name, "d", root / name))
    (root / "alpha" / "sub").mkdir()
    (root / "alpha" / "sub" / "SKILL.md").write_text("---\nname: alpha-sub\ndescription: d\n---\n")
    return root, made


def test_failed_and_unanswered_reads_are_not_activations(tmp_path: Path) -> None:
    root, skills = _skills(tmp_path)
    calls = [
        ToolCall("1", "read", {"path": str(root / "alpha/SKILL.md")}, "ENOENT", True),
        ToolCall("2", "read", {"path": str(root / "beta/SKILL.md")}, None, None),
    ]
    home, cwd = tmp_path / "home", tmp_path / "work"
    assert activated_skills(calls, skills, cwd=cwd, home=home) == []
    calls.append(ToolCall("3", "bash", {"command": f"cat {root}/beta/SKILL.md"}, "---", False))
    assert activated_skills(calls, skills, cwd=cwd, home=home) == ["beta"]


def test_a_nested_skill_md_read_is_undeclared(tmp_path: Path) -> None:
    root, skills = _skills(tmp_path)
    home, cwd = tmp_path / "home", tmp_path / "work"
    calls = [
        ToolCall("1", "read", {"path": str(root / "alpha/sub/SKILL.md")}, "---", False),
        ToolCall("2", "read", {"path": str(root / "alpha/SKILL.md")}, "---", False),
    ]
    assert activated_skills(calls, skills, cwd=cwd, home=home) == ["alpha"]
    found = undeclared_skills(calls, skills, cwd=cwd, home=home, skills_root=root)
    assert found == ["alpha-sub"]


def test_pi_installs_with_the_shared_copy_rules(tmp_path: Path) -> None:
    """Issue 11 item 16: pi's installer is a FolderSkillInstaller (links stay inside)."""
    import os

    from caliper.plugin.backend import FolderSkillInstaller
    from caliper.plugin.sandbox import make_sandbox, remove_sandbox
    from caliper.plugin.skills import ResolvedSkill
    from caliper_backend_pi.skills import PiSkillInstaller

    assert issubclass(PiSkillInstaller, FolderSkillInstaller)
    source = tmp_path / "src" / "linky"
    source.mkdir(parents=True)
    (source / "SKILL.md").write_text("---\nname: linky\ndescription: d\n---\n")
    (tmp_path / "secret.txt").write_text("SECRET")
    os.symlink("missing", source / "dangling")
    os.symlink(".", source / "loop")
    box = make_sandbox(spec_dir=tmp_path, parent=tmp_path)
    try:
        (installed,) = PiSkillInstaller().install([ResolvedSkill("linky", "d", source)], box)
        assert sorted(p.name for p in installed.skill_dir.iterdir()) == ["SKILL.md"]
        assert installed.skill_dir == box.home / ".pi" / "agent" / "skills" / "linky"
        # a link leaving the skill's tree refuses the skill instead of being copied
        import pytest

        from caliper.errors import CaliperError

        os.symlink(tmp_path / "secret.txt", source / "secret")
        with pytest.raises(CaliperError, match=r"secret is a link to"):
            PiSkillInstaller().install([ResolvedSkill("linky2", "d", source)], box)
    finally:
        remove_sandbox(box)
