"""Resolving skills: path sources, content hashes, and git sources through the local cache.

Every git test uses repositories made with `git init` in a temporary folder: no network.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from caliper.default_plugins.activation_judge import ActivationJudge
from caliper.default_plugins.assert_judge import AssertJudge
from caliper.errors import SpecError
from caliper.spec.gitcache import GitCache, GitSourceError, cache_root, clone_url
from caliper.spec.load import SpecInvalid, check_spec, load_spec
from caliper.spec.skills import content_hash, resolve_skills

SKILLS = Path(__file__).resolve().parents[1] / "specs" / "skills"
JUDGES = {"assert": AssertJudge(), "activates": ActivationJudge()}
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.strip()


def skill_md(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n"


@pytest.fixture
def origin(tmp_path: Path) -> dict[str, str]:
    """A repository with a root skill and a nested one, two commits, a branch and a tag."""
    repo = tmp_path / "origin"
    (repo / "skills" / "tdd").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "SKILL.md").write_text(skill_md("root-skill", "first version"))
    (repo / "skills" / "tdd" / "SKILL.md").write_text(skill_md("tdd", "test first"))
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "one")
    first = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "v1")
    (repo / "SKILL.md").write_text(skill_md("root-skill", "second version"))
    git(repo, "commit", "-q", "-am", "two")
    second = git(repo, "rev-parse", "HEAD")
    git(repo, "branch", "feature", first)
    return {"path": str(repo), "first": first, "second": second}


def write_spec(folder: Path, skills_yaml: str, activates: str = "[]") -> Path:
    spec = folder / "demo.eval.yaml"
    spec.write_text(
        f"skills:\n{skills_yaml}tasks:\n  - name: t\n    prompt: p\n    activates: {activates}\n"
    )
    return spec


# -- path sources ---------------------------------------------------------------------------


def test_path_sources_resolve_to_their_folders(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path,
        f"  - {SKILLS / 'commit-writer' / 'SKILL.md'}\n  - {SKILLS / 'changelog-writer'}\n",
        "[commit-writer]",
    )
    skills = resolve_skills(load_spec(spec, JUDGES))
    assert [s.name for s in skills] == ["commit-writer", "changelog-writer"]
    first = skills[0]
    assert first.source_dir == (SKILLS / "commit-writer").resolve()
    assert first.source_kind == "path"
    assert first.declared_as == str(SKILLS / "commit-writer" / "SKILL.md")
    assert first.description.startswith("Write a conventional-commit message")
    assert skills[1].description.startswith("Summarise what changed")  # folded scalar
    assert first.git_sha is None
    assert first.content_hash == content_hash(SKILLS / "commit-writer")


def test_content_hash_follows_the_files(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "SKILL.md").write_text("a")
    before = content_hash(folder)
    assert content_hash(folder) == before
    (folder / ".caliper" / "results").mkdir(parents=True)
    (folder / ".caliper" / "results" / "run.json").write_text("{}")
    assert content_hash(folder) == before  # saved runs do not change the skill
    (folder / "mine.eval.yaml").write_text("tasks: []")
    assert content_hash(folder) == before  # nor does a spec kept beside it
    (folder / "scripts").mkdir()
    (folder / "scripts" / "x.sh").write_text("echo")
    added = content_hash(folder)
    assert added != before
    (folder / "scripts" / "x.sh").rename(folder / "scripts" / "y.sh")
    assert content_hash(folder) != added  # a renamed file is a change


def test_missing_path_raises_with_line(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, "  - ./gone\n")
    with pytest.raises(SpecInvalid) as caught:
        load_spec(spec, JUDGES)
    (problem,) = caught.value.problems
    assert (problem.line, problem.field) == (2, "skills[0]")
    assert "./gone does not exist" in problem.message


# -- cache location and URLs ----------------------------------------------------------------


def test_cache_root_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CALIPER_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "caliper"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "caliper"
    monkeypatch.setenv("CALIPER_CACHE_DIR", str(tmp_path / "explicit"))
    assert cache_root() == tmp_path / "explicit"


def test_clone_urls(tmp_path: Path) -> None:
    assert clone_url("owner/name", tmp_path) == "https://github.com/owner/name.git"
    assert clone_url("owner/name.git", tmp_path) == "https://github.com/owner/name.git"
    assert clone_url("https://host/x/y.git", tmp_path) == "https://host/x/y.git"
    assert clone_url("git@host:x/y.git", tmp_path) == "git@host:x/y.git"
    assert clone_url("file:///srv/repo", tmp_path) == "file:///srv/repo"
    assert clone_url("./owner/name", tmp_path) == str(tmp_path / "owner" / "name")
    assert clone_url("/abs/repo", tmp_path) == "/abs/repo"


# -- git sources ----------------------------------------------------------------------------


def test_short_sha_on_a_cold_cache(tmp_path: Path, origin: dict[str, str]) -> None:
    cache = tmp_path / "cache"
    spec = write_spec(
        tmp_path, f"  - repo: {origin['path']}\n    ref: '{origin['first'][:7]}'\n", "[root-skill]"
    )
    (skill,) = resolve_skills(load_spec(spec, JUDGES), cache_dir=cache)
    assert skill.git_sha == origin["first"]
    assert skill.git_ref == origin["first"][:7]
    assert skill.git_repo == origin["path"]
    assert skill.source_kind == "git"
    assert skill.description == "first version"
    assert skill.source_dir.parent.parent == cache / "skills" / "checkouts"
    assert skill.source_dir.name == origin["first"]
    assert not (skill.source_dir / ".git").exists()


@pytest.mark.parametrize(
    ("ref", "which", "description"),
    [
        ("main", "second", "second version"),
        ("feature", "first", "first version"),
        ("v1", "first", "first version"),
        (None, "second", "second version"),
    ],
)
def test_branches_tags_and_unpinned(
    tmp_path: Path, origin: dict[str, str], ref: str | None, which: str, description: str
) -> None:
    ref_line = f"    ref: {ref}\n" if ref else ""
    spec = write_spec(tmp_path, f"  - repo: file://{origin['path']}\n{ref_line}")
    (skill,) = resolve_skills(load_spec(spec, JUDGES), cache_dir=tmp_path / "cache")
    assert skill.git_sha == origin[which]
    assert skill.description == description


def test_path_inside_the_repository(tmp_path: Path, origin: dict[str, str]) -> None:
    spec = write_spec(
        tmp_path,
        f"  - repo: {origin['path']}\n    path: skills/tdd/SKILL.md\n"
        f"  - repo: {origin['path']}\n    path: skills/tdd\n    ref: v1\n",
        "[tdd]",
    )
    with pytest.raises(SpecInvalid) as caught:  # the same skill twice
        resolve_skills(load_spec(spec, JUDGES), cache_dir=tmp_path / "cache")
    assert "'tdd' is already declared by skills[0]" in caught.value.problems[0].message
    spec = write_spec(tmp_path, f"  - repo: {origin['path']}\n    path: skills/tdd\n", "[tdd]")
    (skill,) = resolve_skills(load_spec(spec, JUDGES), cache_dir=tmp_path / "cache")
    assert skill.name == "tdd"
    assert skill.source_dir.name == "tdd"


def test_missing_path_in_repository(tmp_path: Path, origin: dict[str, str]) -> None:
    spec = write_spec(tmp_path, f"  - repo: {origin['path']}\n    path: skills/nope/SKILL.md\n")
    with pytest.raises(SpecInvalid) as caught:
        resolve_skills(load_spec(spec, JUDGES), cache_dir=tmp_path / "cache")
    message = caught.value.problems[0].message
    assert "'skills/nope/SKILL.md'" in message
    assert "does not exist" in message


def test_unknown_ref_and_unknown_repo(tmp_path: Path, origin: dict[str, str]) -> None:
    spec = write_spec(tmp_path, f"  - repo: {origin['path']}\n    ref: no-such-branch\n")
    with pytest.raises(SpecInvalid) as caught:
        resolve_skills(load_spec(spec, JUDGES), cache_dir=tmp_path / "cache")
    assert "no-such-branch names no commit" in caught.value.problems[0].message
    spec = write_spec(tmp_path, f"  - repo: {tmp_path / 'missing-repo'}\n")
    with pytest.raises(SpecInvalid) as caught:
        resolve_skills(load_spec(spec, JUDGES), cache_dir=tmp_path / "cache")
    assert "could not clone" in caught.value.problems[0].message


def test_activates_names_are_checked_once_git_sources_resolve(
    tmp_path: Path, origin: dict[str, str]
) -> None:
    spec = write_spec(tmp_path, f"  - repo: {origin['path']}\n", "[rooot-skill]")
    loaded = load_spec(spec, JUDGES)  # not cached yet: the name cannot be checked
    with pytest.raises(SpecInvalid) as caught:
        resolve_skills(loaded, cache_dir=tmp_path / "cache")
    problem = caught.value.problems[0]
    assert problem.field == "tasks[0].activates[0]"
    assert "'rooot-skill' is not the name of a declared skill" in problem.message


def test_validate_uses_the_cache_offline(tmp_path: Path, origin: dict[str, str]) -> None:
    cache = tmp_path / "cache"
    spec = write_spec(tmp_path, f"  - repo: {origin['path']}\n    ref: v1\n", "[root-skill]")
    cold = check_spec(spec, JUDGES, cache_dir=cache)
    assert cold.valid
    assert "is not in the cache: not checked" in cold.notes[0]
    assert not (cache / "skills" / "repos").exists()
    with pytest.raises(SpecError, match="not in the cache") as caught:
        resolve_skills(cold.spec, offline=True, cache_dir=cache)
    assert "skills[0]" in caught.value.message
    resolve_skills(cold.spec, cache_dir=cache)
    warm = check_spec(spec, JUDGES, cache_dir=cache)
    assert warm.notes == []
    assert [s.name for s in warm.skills] == ["root-skill"]
    typo = write_spec(tmp_path, f"  - repo: {origin['path']}\n    ref: v1\n", "[root-skil]")
    problems = check_spec(typo, JUDGES, cache_dir=cache).problems
    assert "Did you mean 'root-skill'?" in problems[0].message


def test_pinned_commit_needs_no_network_and_unpinned_falls_back(
    tmp_path: Path, origin: dict[str, str]
) -> None:
    cache = GitCache(tmp_path / "cache")
    url = origin["path"]
    pinned = cache.resolve(url, origin["first"][:10])
    unpinned = cache.resolve(url, None)
    assert unpinned.sha == origin["second"]
    Path(url).rename(tmp_path / "moved-away")  # the remote is gone
    again = cache.resolve(url, origin["first"][:10])
    assert (again.sha, again.note) == (pinned.sha, None)
    fallback = cache.resolve(url, None)
    assert fallback.sha == origin["second"]
    assert "could not reach the remote" in fallback.note
    with pytest.raises(GitSourceError, match="could not fetch it"):
        cache.resolve(url, "feature-that-never-existed")


def test_a_moved_branch_is_fetched(tmp_path: Path, origin: dict[str, str]) -> None:
    cache = GitCache(tmp_path / "cache")
    repo = Path(origin["path"])
    assert cache.resolve(origin["path"], None).sha == origin["second"]
    (repo / "SKILL.md").write_text(skill_md("root-skill", "third version"))
    git(repo, "commit", "-q", "-am", "three")
    third = git(repo, "rev-parse", "HEAD")
    moved = cache.resolve(origin["path"], None)
    assert moved.sha == third
    assert cache.resolve(origin["path"], "main").sha == third
    assert cache.resolve(origin["path"], None, offline=True).sha == third


CONCURRENT = """
import json, sys
from pathlib import Path
from caliper.errors import SpecError
from caliper.spec.gitcache import GitCache
checkout = GitCache(Path(sys.argv[1])).resolve(sys.argv[2], sys.argv[3])
print(json.dumps([checkout.sha, str(checkout.directory),
                  (checkout.directory / "SKILL.md").read_text()]))
"""


def test_concurrent_runs_share_one_cache(tmp_path: Path, origin: dict[str, str]) -> None:
    cache = tmp_path / "cache"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT, str(cache), origin["path"], ref],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for ref in ["main", origin["first"][:8], "main", "v1", "main", "feature"]
    ]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        results.append(json.loads(out))
    shas = {sha for sha, _, _ in results}
    assert shas == {origin["first"], origin["second"]}
    for sha, directory, text in results:
        assert Path(directory).name == sha
        assert ("first version" if sha == origin["first"] else "second version") in text
    leftovers = [p.name for p in (cache / "skills").rglob(".*") if p.name.startswith(".")]
    assert leftovers == []
    assert len(list((cache / "skills" / "repos").iterdir())) == 1


def test_fallback_note_reaches_on_note(tmp_path: Path, origin: dict[str, str]) -> None:
    spec = write_spec(tmp_path, f"  - repo: {origin['path']}\n")
    loaded = load_spec(spec, JUDGES)
    resolve_skills(loaded, cache_dir=tmp_path / "cache")
    Path(origin["path"]).rename(tmp_path / "gone")
    notes: list[str] = []
    (skill,) = resolve_skills(loaded, cache_dir=tmp_path / "cache", on_note=notes.append)
    assert skill.git_sha == origin["second"]
    assert len(notes) == 1
    assert "using the cached commit" in notes[0]


def test_missing_git_binary_is_explained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = write_spec(tmp_path, "  - repo: owner/name\n")
    loaded = load_spec(spec, JUDGES)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(SpecInvalid) as caught:
        resolve_skills(loaded, cache_dir=tmp_path / "cache")
    assert "git is not installed" in caught.value.problems[0].message


def test_unwritable_cache_is_explained(tmp_path: Path, origin: dict[str, str]) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache should be")
    with pytest.raises(GitSourceError, match="cannot use the cache") as caught:
        GitCache(blocker).resolve(origin["path"], None)
    assert "CALIPER_CACHE_DIR" in caught.value.render()


def test_links_out_of_the_repository_are_left_out_not_fatal(tmp_path: Path) -> None:
    """Issue 11 item 16: an absolute link anywhere made the whole repository unusable.

    Such links are not unpacked (their target never reaches the checkout) and validate names
    each one; the skill is usable."""
    repo = tmp_path / "evil"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "SKILL.md").write_text(skill_md("evil", "d"))
    (repo / "escape").symlink_to("/etc/passwd")
    (repo / "docs").mkdir()
    (repo / "docs" / "up").symlink_to("../../outside.txt")
    (repo / "docs" / "ok").symlink_to("../SKILL.md")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "one")
    checkout = GitCache(tmp_path / "cache").resolve(str(repo), None)
    assert not (checkout.directory / "escape").exists()
    assert not (checkout.directory / "escape").is_symlink()
    assert not (checkout.directory / "docs" / "up").is_symlink()
    assert (checkout.directory / "docs" / "ok").read_text() == skill_md("evil", "d")
    left = {d["path"]: d["target"] for d in GitCache.left_out_links(checkout.directory)}
    assert left == {"escape": "/etc/passwd", "docs/up": "../../outside.txt"}
    spec = write_spec(tmp_path, f"  - repo: {repo}\n")
    check = check_spec(spec, JUDGES, cache_dir=tmp_path / "cache")
    assert check.valid, check.problems
    messages = [w.message for w in check.warnings]
    assert any("escape in" in m and "/etc/passwd" in m and "left out" in m for m in messages)


def test_a_git_source_with_a_linked_skill_file_installs_the_targets_content(
    tmp_path: Path,
) -> None:
    """Issue 26: a SKILL.md linked inside the repository (a collection sharing one skill
    between agents) was installed empty; its target's content is installed, the name is
    compared with the link's folder, and the hash covers the content."""
    from caliper.system.skill_tree import copy_tree

    repo = tmp_path / "collection"
    (repo / "skills" / "board").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "skills" / "board" / "SKILL.md").write_text(skill_md("board", "plans boards"))
    (repo / ".gemini" / "skills" / "board").mkdir(parents=True)
    os.symlink("../../../skills/board/SKILL.md", repo / ".gemini" / "skills" / "board" / "SKILL.md")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "one")
    spec = write_spec(
        tmp_path, f"  - repo: {repo}\n    path: .gemini/skills/board\n", activates="[board]"
    )
    check = check_spec(spec, JUDGES, cache_dir=tmp_path / "cache", online=True)
    assert check.valid, check.problems
    assert check.warnings == [], check.warnings
    (skill,) = check.skills
    assert skill.name == "board" and skill.content_hash
    copy = tmp_path / "installed"
    copy_tree(skill.source_dir, copy, tree=skill.tree, source_root=skill.source_root)
    assert (copy / "SKILL.md").read_text() == skill_md("board", "plans boards")
