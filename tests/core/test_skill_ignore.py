"""What an attempt gets of a skill folder that also holds other things: ``.gitignore`` and
``.caliperignore`` are honoured (checked against ``git check-ignore`` itself), caliper's own
outputs are never installed, output-like files are warned about, ``validate`` lists what
is installed, and the content hash covers exactly that (a report written beside the skill
no longer changes it). Process cases run the real ``caliper`` script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from caliper.system.skill_ignore import parse
from caliper.system.skill_tree import content_hash, scan
from caliper_fakeagent.harness import CALIPER, CaliperRun, Workspace

GIT = shutil.which("git")

RULES = """\
# comment
*.log
!keep.log
/build/
docs/**/*.html
**/tmp
cache/
secret?.txt
[ab]*.bak
\\#hash.txt
trailing.txt   \n
nested/deep/*.out
"""
PATHS = [
    "run.log",
    "keep.log",
    "sub/deeper.log",
    "sub/keep.log",
    "build/x.txt",
    "sub/build/y.txt",
    "docs/page.html",
    "docs/a/b/page.html",
    "other/page.html",
    "tmp/t.txt",
    "sub/tmp/t.txt",
    "cache/c.txt",
    "sub/cache/c.txt",
    "secret1.txt",
    "secret12.txt",
    "a1.bak",
    "c1.bak",
    "#hash.txt",
    "trailing.txt",
    "nested/deep/z.out",
    "nested/z.out",
    "plain.txt",
    "SKILL.md",
]


def _make(root: Path, paths: list[str]) -> None:
    for relative in paths:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(relative + "\n")


@pytest.mark.skipif(GIT is None, reason="needs git as the reference")
def test_the_rules_agree_with_git_check_ignore(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    skill = repo / "skills" / "s"
    _make(skill, PATHS)
    (skill / "SKILL.md").write_text("---\nname: s\ndescription: d.\n---\n")
    (repo / ".gitignore").write_text("skills/s/plain-top-rule.txt\n*.bak\n!c1.bak\n")
    (skill / ".gitignore").write_text(RULES)
    (skill / "sub").mkdir(exist_ok=True)
    (skill / "sub" / ".gitignore").write_text("!deeper.log\n")
    _make(skill, ["plain-top-rule.txt"])
    subprocess.run([GIT, "init", "-q"], cwd=repo, check=True)
    everything = [*PATHS, "plain-top-rule.txt"]
    done = subprocess.run(
        [GIT, "check-ignore", "--no-index", "--stdin"],
        cwd=skill,
        input="\n".join(everything) + "\n",
        capture_output=True,
        text=True,
    )
    git_ignored = set(done.stdout.split("\n")) - {""}
    installed = {f.relative for f in scan(skill).files}
    ours = set(everything) - installed
    assert ours == git_ignored
    assert "run.log" in ours and "keep.log" not in ours and "sub/deeper.log" not in ours
    assert "c1.bak" not in ours and "a1.bak" in ours  # the inner file's rule wins


def test_a_folder_excluded_is_not_re_included_by_a_negation() -> None:
    rules = parse("logs/\n!logs/keep.txt\n")
    assert rules[0].dir_only and rules[0].matches("logs", True)
    assert not rules[0].matches("logs", False)
    assert rules[1].negate and rules[1].anchored


def _readme_layout(root: Path) -> Path:
    """The README's layout: the spec beside SKILL.md, ``skills: [./SKILL.md]``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "SKILL.md").write_text(
        "---\nname: greeter\ndescription: Greets people by name.\n---\nSay hello.\n"
    )
    spec = root / "greeter.eval.yaml"
    spec.write_text(
        "skills: [./SKILL.md]\n"
        "tasks:\n"
        "  - name: hello\n"
        "    prompt: |\n"
        '      fake: bash ls -A "$HOME/.fake-agent/skills/greeter" > installed.txt\n'
        "    assert: \"assert open('installed.txt').read().split() == ['SKILL.md'], "
        "open('installed.txt').read()\"\n"
    )
    return spec


def _run(space: Workspace, spec: Path, *args: str) -> CaliperRun:
    """``caliper run SPEC --model fake`` from the spec's folder (results land beside it)."""
    done = subprocess.run(
        [str(CALIPER), "run", str(spec), "--model", "fake", *args],
        cwd=spec.parent,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = sorted(
        (spec.parent / ".caliper" / "results").glob("*/*.json"), key=lambda p: p.stat().st_mtime
    )
    return CaliperRun(done.returncode, done.stdout, done.stderr, found[-1] if found else None)


def test_outputs_written_beside_the_skill_stay_out_of_it(tmp_path: Path) -> None:
    space = Workspace.create(tmp_path)
    folder = space.root / "greeter"
    spec = _readme_layout(folder)
    first = _run(space, spec, "--k", "1", "--junit", "junit.xml")
    assert first.returncode == 0, first.stderr + first.stdout
    assert [a["outcome"] for a in first.attempts("hello")] == ["pass"]
    assert (folder / "junit.xml").is_file()
    html = str(folder / "report.html")
    report = subprocess.run(
        [str(CALIPER), "report", str(first.results_path), "--format", "html", "-o", html],
        cwd=folder,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert report.returncode == 0, report.stderr
    markdown = subprocess.run(
        [str(CALIPER), "report", str(first.results_path), "--format", "markdown"],
        cwd=folder,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert markdown.returncode == 0, markdown.stderr
    (folder / "summary.md").write_text(markdown.stdout)
    (folder / "saved.json").write_bytes(first.results_path.read_bytes())
    hash_before = first.results["meta"]["skill_snapshots"][0]["content_hash"]

    (folder / "run.log").write_text("a log the user kept\n")
    (folder / ".caliperignore").write_text("*.log\n")
    second = _run(space, spec, "--k", "1")
    assert second.returncode == 0, second.stderr + second.stdout
    assert [a["outcome"] for a in second.attempts("hello")] == ["pass"]
    assert second.results["meta"]["skill_snapshots"][0]["content_hash"] == hash_before


def test_validate_lists_what_is_installed_and_warns_on_output_like_files(
    tmp_path: Path,
) -> None:
    root = tmp_path / "greeter"
    spec = _readme_layout(root)
    (root / "notes.txt").write_text("my notes\n")
    (root / "agent.log").write_text("log line\n")
    (root / "scripts").mkdir()
    (root / "scripts" / "run.sh").write_text("echo hi\n")
    (root / ".caliperignore").write_text("notes.txt\n")
    env = {**os.environ, "NO_COLOR": "1"}
    text = subprocess.run(
        [str(CALIPER), "validate", str(spec)], capture_output=True, text=True, env=env, timeout=60
    )
    assert text.returncode == 0, text.stderr
    assert "installs greeter: 3 files" in text.stdout
    assert "agent.log: looks like something a command wrote" in text.stdout
    verbose = subprocess.run(
        [str(CALIPER), "validate", "-v", "--format", "json", str(spec)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    (install,) = json.loads(verbose.stdout)["specs"][0]["installs"]
    assert install["paths"] == ["SKILL.md", "agent.log", "scripts/run.sh"]
    assert install["files"] == 3
    assert install["bytes"] == sum(
        (root / p).stat().st_size for p in ("SKILL.md", "agent.log", "scripts/run.sh")
    )


def test_the_hash_covers_exactly_the_installed_files(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    (root / "SKILL.md").write_text("---\nname: s\ndescription: d.\n---\n")
    before = content_hash(root)
    (root / ".gitignore").write_text("scratch/\n")
    (root / "scratch").mkdir()
    (root / "scratch" / "a.txt").write_text("a\n")
    (root / ".caliperignore").write_text("*.tmp\n")
    (root / "x.tmp").write_text("x\n")
    # .gitignore itself is part of the skill (a repository file); the rest is left out
    with_gitignore = content_hash(root)
    (root / ".gitignore").unlink()
    (root / ".caliperignore").write_text("*.tmp\nscratch/\n")
    assert content_hash(root) == before
    assert with_gitignore != before
