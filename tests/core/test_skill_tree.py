"""Copying skill folders safely (issue 11 item 16): links, loops, special files, size cap,
and a content hash that covers exactly what is copied. The validate tests run the real
``caliper`` script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from caliper.errors import CaliperError
from caliper.plugin.backend import FolderSkillInstaller
from caliper.plugin.skills import ResolvedSkill
from caliper.system.skill_tree import (
    SkillTooLarge,
    SkillUnusable,
    content_hash,
    copy_tree,
    max_skill_bytes,
    scan,
)

CALIPER = Path(sys.executable).parent / "caliper"


def make_skill(root: Path, name: str = "linky") -> Path:
    folder = root / name
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Links.\n---\nBody\n")
    (folder / "references" / "ref.txt").write_text("REF-MARKER\n")
    return folder


def tricky_skill(tmp_path: Path, *, secret: bool = False) -> Path:
    """A skill with every kind of link that is left out (and, with ``secret``, one that leaves
    its tree and refuses the skill), and a FIFO."""
    folder = make_skill(tmp_path / "src")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE-SECRET\n")
    os.symlink(".", folder / "loop")  # a folder link to itself
    os.symlink("..", folder / "references" / "up")  # to the folder above it (a loop too)
    os.symlink("missing.txt", folder / "dangling")
    if secret:
        os.symlink(outside / "secret.txt", folder / "secret")  # absolute, leaves the tree
    os.symlink("references", folder / "inner")  # stays inside: followed
    os.mkfifo(folder / "pipe")
    return folder


def test_copy_follows_inner_links_and_leaves_out_the_rest(tmp_path: Path) -> None:
    folder = tricky_skill(tmp_path)
    target = tmp_path / "copy"
    start = time.monotonic()
    tree = copy_tree(folder, target)
    assert time.monotonic() - start < 10
    copied = sorted(p.relative_to(target).as_posix() for p in target.rglob("*"))
    assert copied == ["SKILL.md", "inner", "inner/ref.txt", "references", "references/ref.txt"]
    assert not any(p.is_symlink() for p in target.rglob("*"))
    assert (target / "inner" / "ref.txt").read_text() == "REF-MARKER\n"
    kinds = sorted((i.path.relative_to(folder).as_posix(), i.kind) for i in tree.issues)
    assert kinds == [
        ("dangling", "dangling"),
        ("inner/up", "loop"),  # the same link reached through `inner`
        ("loop", "loop"),
        ("pipe", "special"),
        ("references/up", "loop"),
    ]


def test_a_link_leaving_the_tree_refuses_the_skill_naming_the_link(tmp_path: Path) -> None:
    folder = tricky_skill(tmp_path, secret=True)
    with pytest.raises(SkillUnusable, match=r"secret is a link to .*outside/secret\.txt"):
        copy_tree(folder, tmp_path / "copy")
    assert not (tmp_path / "copy" / "secret").exists()
    tree = scan(folder)
    assert tree.fatal is not None and tree.fatal.kind == "outside"


def test_the_size_cap_refuses_with_a_clear_message(tmp_path: Path) -> None:
    folder = make_skill(tmp_path)
    (folder / "big.bin").write_bytes(b"x" * 5000)
    with pytest.raises(SkillTooLarge, match="CALIPER_SKILL_MAX_BYTES"):
        copy_tree(folder, tmp_path / "copy", max_bytes=4000)
    assert max_skill_bytes({"CALIPER_SKILL_MAX_BYTES": "2M"}) == 2 * 1024 * 1024
    assert max_skill_bytes({}) == 100 * 1024 * 1024
    with pytest.raises(ValueError, match="not a size"):
        max_skill_bytes({"CALIPER_SKILL_MAX_BYTES": "lots"})


def test_installer_reports_an_oversized_skill_as_a_caliper_error(
    tmp_path: Path, monkeypatch
) -> None:
    folder = make_skill(tmp_path)
    (folder / "big.bin").write_bytes(b"x" * 5000)
    monkeypatch.setenv("CALIPER_SKILL_MAX_BYTES", "4000")

    class Installer(FolderSkillInstaller):
        id = "t"

        def skills_root(self, sandbox):
            return tmp_path / "root"

    with pytest.raises(CaliperError, match="refused"):
        Installer().install([ResolvedSkill("linky", "d", folder)], sandbox=None)


def test_installs_copy_the_scan_the_run_resolved_instead_of_walking_again(
    tmp_path: Path, monkeypatch
) -> None:
    """A run walks each skill folder once (resolving and hashing it), not once per attempt."""
    import caliper.system.skill_tree as skill_tree
    from caliper.host.plugins import PluginHost
    from caliper.spec.load import load_spec_for_run

    folder = make_skill(tmp_path)
    script = folder / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o750)
    spec_file = tmp_path / "t.eval.yaml"
    spec_file.write_text(
        "skills:\n  - ./linky\ntasks:\n  - name: a\n    prompt: hi\n    activates: [linky]\n"
    )
    _, (skill,) = load_spec_for_run(spec_file, PluginHost().judges())
    walks: list[Path] = []
    real_scan = skill_tree.scan
    monkeypatch.setattr(skill_tree, "scan", lambda f, **k: walks.append(f) or real_scan(f, **k))

    class Installer(FolderSkillInstaller):
        id = "t"

        def __init__(self, root: Path):
            self.root = root

        def skills_root(self, sandbox):
            return self.root

    for n in range(3):
        (installed,) = Installer(tmp_path / f"attempt-{n}").install([skill], sandbox=None)
        copied = installed.skill_file.parent
        assert (copied / "references" / "ref.txt").read_text() == "REF-MARKER\n"
        assert os.stat(copied / "run.sh").st_mode & 0o777 == 0o750
    assert walks == []
    # a skill without a scan (built by hand, or by a plugin) is still walked, once a copy
    Installer(tmp_path / "by-hand").install([ResolvedSkill("linky", "d", folder)], sandbox=None)
    assert walks == [folder]


def test_hash_covers_files_reached_through_folder_links(tmp_path: Path) -> None:
    """The old hash skipped ``inner/ref.txt`` although the copy carried it."""
    folder = make_skill(tmp_path)
    other = folder.parent / "elsewhere-inside"
    os.symlink("references", folder / "inner")
    before = content_hash(folder)
    (folder / "references" / "ref.txt").write_text("CHANGED\n")
    assert content_hash(folder) != before
    assert {f.relative for f in scan(folder).files} >= {"inner/ref.txt", "references/ref.txt"}
    assert not other.exists()


def test_hash_of_a_plain_folder_is_unchanged_by_the_rewrite(tmp_path: Path) -> None:
    """Runs saved before keep comparing equal: same digest recipe for plain folders."""
    import hashlib

    folder = make_skill(tmp_path)
    digest = hashlib.sha256()
    for rel in ("SKILL.md", "references/ref.txt"):
        data = (folder / rel).read_bytes()
        digest.update(rel.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    assert content_hash(folder) == digest.hexdigest()


def _validate_json(spec: Path, env: dict[str, str] | None = None) -> tuple[int, dict]:
    done = subprocess.run(
        [str(CALIPER), "validate", str(spec), "--format", "json"],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
        check=False,
    )
    return done.returncode, json.loads(done.stdout)


def _spec_for(folder: Path) -> Path:
    spec = folder.parent / "s.eval.yaml"
    spec.write_text(
        f"skills:\n  - {folder}\ntasks:\n  - name: t\n    prompt: p\n    assert: assert True\n"
    )
    return spec


def test_validate_reports_each_left_out_entry_with_its_path(tmp_path: Path) -> None:
    folder = tricky_skill(tmp_path)
    start = time.monotonic()
    code, payload = _validate_json(_spec_for(folder))
    assert time.monotonic() - start < 30
    assert code == 0, payload
    warnings = {Path(w["file"]).name: w["message"] for w in payload["specs"][0]["warnings"]}
    assert "does not exist" in warnings["dangling"] and "remove the link" in warnings["dangling"]
    assert "loop" in warnings["loop"] and "loop" in warnings["up"]
    assert "FIFO" in warnings["pipe"]


def test_validate_refuses_a_skill_over_the_size_cap(tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "src")
    (folder / "big.bin").write_bytes(b"x" * 5000)
    code, payload = _validate_json(_spec_for(folder), {"CALIPER_SKILL_MAX_BYTES": "4000"})
    assert code == 2
    (problem,) = payload["specs"][0]["problems"]
    assert str(folder) in problem["message"]
    assert "CALIPER_SKILL_MAX_BYTES" in problem["message"] and problem["line"] == 2
