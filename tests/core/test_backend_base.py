"""The shared installer base backends build on."""

from __future__ import annotations

import pytest

from caliper.backend import FolderSkillInstaller
from caliper.errors import CaliperError
from caliper.sandbox import make_sandbox, remove_sandbox
from caliper.skills import ResolvedSkill


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
