"""Git skill sources are unpacked safely whatever the Python patch level (issue 11 item 17).

Older Pythons (3.11.2 on Debian 12) have no ``tarfile.data_filter``; these tests remove it to
stand in for them and check that caliper's own member checks still refuse every escape.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from test_spec_skills import git, skill_md

from caliper.spec import safetar
from caliper.spec.gitcache import GitCache
from caliper_fakeagent.harness import FAKE_AGENT, PLUGINS

CALIPER = Path(sys.executable).parent / "caliper"


@pytest.fixture(params=["with-data-filter", "old-python"])
def python_level(request, monkeypatch):
    """Run each test as is, and again as on a Python without ``tarfile.data_filter``."""
    if request.param == "old-python":
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    elif not hasattr(tarfile, "data_filter"):
        pytest.skip("this Python has no tarfile.data_filter")
    return request.param


def evil_repo(tmp_path: Path, target: str = "/etc/hostname") -> Path:
    repo = tmp_path / "evil"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "SKILL.md").write_text(skill_md("evil", "d"))
    (repo / "hostname").symlink_to(target)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "one")
    return repo


def test_a_link_out_of_the_repository_never_reaches_the_checkout(tmp_path, python_level):
    """The link is left out (the repository stays usable, issue 11 item 16) and the target's
    content is never unpacked (item 17), with or without tar's ``data`` filter."""
    cache = tmp_path / "cache"
    checkout = GitCache(cache).resolve(str(evil_repo(tmp_path)), None)
    assert not list((cache / "skills" / "checkouts").rglob("hostname"))
    assert not (checkout.directory / "hostname").is_symlink()
    left = {d["path"]: d["target"] for d in GitCache.left_out_links(checkout.directory)}
    assert left == {"hostname": "/etc/hostname"}


def test_links_inside_the_repository_still_work(tmp_path, python_level):
    repo = tmp_path / "fine"
    (repo / "docs").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "SKILL.md").write_text(skill_md("fine", "d"))
    (repo / "docs" / "guide.md").write_text("guide\n")
    (repo / "guide.md").symlink_to("docs/guide.md")
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o4777)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "one")
    checkout = GitCache(tmp_path / "cache").resolve(str(repo), None)
    tree = checkout.directory
    assert (tree / "guide.md").read_text() == "guide\n"
    assert (tree / "run.sh").stat().st_mode & 0o7777 == 0o755


def _tar(tmp_path: Path, *members: tuple[tarfile.TarInfo, bytes]) -> Path:
    path = tmp_path / "crafted.tar"
    with tarfile.open(path, "w") as tar:
        for info, data in members:
            info.size = len(data) if info.isfile() else 0
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return path


def _info(name: str, kind: bytes = tarfile.REGTYPE, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    return info


CRAFTED = {
    "absolute-name": [(_info("/tmp/caliper-escape-abs"), b"x")],
    "dot-dot-name": [(_info("../escape"), b"x")],
    "relative-link-out": [(_info("up", tarfile.SYMTYPE, "../../escape"), b"")],
    "absolute-link": [(_info("host", tarfile.SYMTYPE, "/etc/hostname"), b"")],
    "hard-link-out": [(_info("hard", tarfile.LNKTYPE, "../escape"), b"")],
    "char-device": [(_info("null", tarfile.CHRTYPE), b"")],
    "fifo": [(_info("pipe", tarfile.FIFOTYPE), b"")],
    "write-through-a-link": [
        (_info("here", tarfile.SYMTYPE, "."), b""),
        (_info("here/out", tarfile.SYMTYPE, "../escape-dir"), b""),
        (_info("here/out/file"), b"x"),
    ],
    "link-chain-out": [
        (_info("here", tarfile.SYMTYPE, "."), b""),
        (_info("out", tarfile.SYMTYPE, "here/../escape"), b""),
    ],
}


@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_every_escaping_member_is_refused(tmp_path, python_level, case):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    archive = _tar(work, *CRAFTED[case])
    before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(tarfile.TarError):
        safetar.extract(archive, work / "tree")
    after = sorted(p.name for p in tmp_path.rglob("*") if "tree" not in p.parts)
    assert after == before  # nothing was written outside the tree
    assert not Path("/tmp/caliper-escape-abs").exists()


def test_the_real_script_on_an_old_python_leaves_the_link_out(tmp_path):
    """``caliper run`` with ``tarfile.data_filter`` removed at start-up (sitecustomize): the
    link is left out and named, and the target's content is never unpacked."""
    site = tmp_path / "old-python"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import tarfile\ndel tarfile.data_filter\n")
    repo = evil_repo(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    spec = project / "s.eval.yaml"
    spec.write_text(
        f"skills:\n  - repo: {repo}\ntasks:\n  - name: t\n    prompt: 'fake: say hi'\n"
        "    activates: [evil]\n"
    )
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(site),
        "CALIPER_CACHE_DIR": str(tmp_path / "cache"),
        "CALIPER_TMPDIR": str(tmp_path / "boxes"),
        "CALIPER_LOAD_PLUGINS": PLUGINS,
        "CALIPER_TEST_PLUGINS": "1",
        "FAKE_AGENT_CLI_PATH": str(FAKE_AGENT),
    }
    probe = subprocess.run(
        [sys.executable, "-c", "import tarfile; print(hasattr(tarfile, 'data_filter'))"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert probe.stdout.strip() == "False"  # the stand-in for an old Python works
    done = subprocess.run(
        [str(CALIPER), "run", str(spec), "--model", "fake", "--k", "1"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "hostname" in output  # the note naming the link that was left out
    assert "Traceback" not in output
    assert not list((tmp_path / "cache").rglob("hostname"))
