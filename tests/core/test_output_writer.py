"""The one output writer (``caliper.system.output_file``): every command that writes a named output
goes through it, checked through the real ``caliper`` script on things that are not regular
files (a device node stays a device, a FIFO gets the bytes, ``/dev/full`` is exit 74), plus a
scan of the source that fails when a module writes a file some other way; and the writer's
own guarantees, in-process (mode kept, old file intact on a full disk, nothing left behind).
"""

from __future__ import annotations

import ast
import errno
import json
import os
import shutil
import stat
import subprocess
import threading
from collections import Counter
from pathlib import Path

import pytest

from caliper.system.output_file import OutputWriteError, replace_problem, write_output
from caliper_fakeagent.harness import CALIPER, FAKE_AGENT, Workspace

REPO = Path(__file__).resolve().parents[2]

SPEC = """\
tasks:
  - name: one
    prompt: "fake: say done"
    assert: "assert True"
  - name: two
    prompt: "fake: exit 3"
    assert: "assert True"
"""

TRIGGER_EVAL = [
    {"query": "total these invoices", "should_trigger": True},
    {"query": "write a poem", "should_trigger": False},
]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One workspace with two saved runs and two shard runs, shared by every command."""
    if not FAKE_AGENT.exists():
        pytest.skip(f"the fake agent is not installed at {FAKE_AGENT}")
    space = Workspace.create(tmp_path_factory.mktemp("writer"))
    (space.root / ".caliper").mkdir()
    spec = space.spec(SPEC)
    runs = []
    for extra in (["--keep-workdirs"], [], ["--shard", "1/2"], ["--shard", "2/2"]):
        done = space.run(spec, "--k", "1", *extra)
        assert done.results_path is not None, done.stderr
        runs.append(str(done.results_path))
    skill = space.skill("invoice-totals", "Totals invoices")
    trigger = space.root / "trigger-eval.json"
    trigger.write_text(json.dumps(TRIGGER_EVAL), encoding="utf-8")
    paths = {"spec": str(spec), "trigger": str(trigger), "skill": str(skill)}
    return {"space": space, "runs": runs, **paths}


# Every command that writes a named output, as the arguments that send it to TARGET.
COMMANDS = {
    "run --output": lambda p: ["run", p["spec"], "--model", "fake", "--k", "1", "--output"],
    "run --junit": lambda p: ["run", p["spec"], "--model", "fake", "--k", "1", "--junit"],
    "retry --output": lambda p: ["retry", p["runs"][0], "--output"],
    "regrade --output": lambda p: ["regrade", p["runs"][0], "--output"],
    "merge --output": lambda p: ["merge", p["runs"][2], p["runs"][3], "--output"],
    "report -o": lambda p: ["report", p["runs"][0], "--format", "html", "-o"],
    "report csv -o": lambda p: ["report", p["runs"][0], "--format", "csv", "-o"],
    "report jsonl -o": lambda p: ["report", p["runs"][0], "--format", "jsonl", "-o"],
    "compare -o": lambda p: ["compare", p["runs"][0], p["runs"][1], "--format", "html", "-o"],
    "compare --junit": lambda p: ["compare", p["runs"][0], p["runs"][1], "--junit"],
    "history -o": lambda p: ["history", "demo", "--format", "html", "-o"],
    "import -o": lambda p: ["import", "skill-creator", p["trigger"], "--skill", p["skill"], "-o"],
}
OK = {"run --output": 1, "run --junit": 1, "retry --output": 1}
"""Exit codes of a successful write: the runs hold an attempt that always crashes (so
``retry`` has work), which makes their runs exit 1 (every retried attempt unusable) or 0."""


def _caliper(project: dict, args: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    space: Workspace = project["space"]
    return subprocess.run(
        [str(CALIPER), *args],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _usable(code: int, name: str) -> bool:
    return code in (0, OK.get(name, 0))


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can make a device node")
@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_device_node_stays_a_device(project, tmp_path, name):
    node = tmp_path / "null"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a private null device
    done = _caliper(project, [*COMMANDS[name](project), str(node)])
    assert _usable(done.returncode, name), done.stderr
    assert stat.S_ISCHR(os.lstat(node).st_mode), f"{name} replaced the device node"
    assert [p.name for p in tmp_path.iterdir()] == ["null"]  # no temp file, no page folder


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_fifo_receives_the_bytes(project, tmp_path, name):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as pipe:
            received.append(pipe.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    done = _caliper(project, [*COMMANDS[name](project), str(fifo)])
    if not received:  # unblock the reader if caliper never opened the FIFO
        with open(fifo, "wb", opener=lambda p, f: os.open(p, f | os.O_NONBLOCK)):
            pass
    reader.join(timeout=30)
    assert _usable(done.returncode, name), done.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert received and received[0].strip(), f"{name} sent nothing into the FIFO"


def _device(folder: Path, minor: int, name: str) -> Path:
    """A private node of the memory device ``(1, minor)`` (3: null, 7: full) when root may
    make one, so a caliper that renamed over it destroys only this copy; else the real one
    under ``/dev`` (which a user who is not root cannot replace)."""
    if os.geteuid() != 0:
        return Path("/dev") / name
    node = folder / name
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    return node


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("name", list(COMMANDS))
def test_dev_full_is_one_line_and_exit_74(project, tmp_path, name):
    full = _device(tmp_path, 7, "full")
    done = _caliper(project, [*COMMANDS[name](project), str(full)])
    assert done.returncode == 74, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "no space left" in errors[0], done.stderr
    assert "Traceback" not in done.stderr and "unexpectedly" not in done.stderr
    assert stat.S_ISCHR(os.lstat(full).st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can see /dev/null replaced")
def test_dev_null_stays_a_character_device(project, tmp_path):
    """First on a private null node; only when that held, on the real ``/dev/null``."""
    for name in ("report -o", "run --junit"):
        private = _device(tmp_path, 3, f"null-{name.split()[0]}")
        done = _caliper(project, [*COMMANDS[name](project), str(private)])
        assert _usable(done.returncode, name), done.stderr
        assert stat.S_ISCHR(os.lstat(private).st_mode), name
        done = _caliper(project, [*COMMANDS[name](project), "/dev/null"])
        assert _usable(done.returncode, name), done.stderr
        assert stat.S_ISCHR(os.lstat("/dev/null").st_mode), name


def test_dev_stdout_sends_the_page_down_the_pipe(project):
    done = _caliper(project, [*COMMANDS["report -o"](project), "/dev/stdout"])
    assert done.returncode == 0, done.stderr
    assert "<html" in done.stdout.lower()


# -- the source never writes a named output any other way --------------------------------------

WRITE_CALLS = {("os", "replace"), ("os", "rename"), ("shutil", "move"), ("tempfile", "mkstemp")}
WRITE_CALLS |= {("tempfile", "NamedTemporaryFile"), ("os", "fdopen")}

ALLOWED = {
    # the writer itself
    "caliper-core/src/caliper/system/output_file.py": {"tempfile.mkstemp": 2, "os.replace": 1},
    # attempt sandboxes, caches and child processes: files caliper makes for itself
    "caliper-core/src/caliper/plugin/private_files.py": {"os.fdopen": 2},
    "caliper-core/src/caliper/system/process/_capture.py": {"os.fdopen": 1},
    "caliper-core/src/caliper/system/skill_tree.py": {"open-w": 1},
    "caliper-core/src/caliper/spec/gitcache.py": {
        "open-w": 1,
        "os.rename": 2,
        "os.replace": 1,
        "write_text": 1,
    },
    "caliper-core/src/caliper/spec/yamldoc.py": {"os.fdopen": 1},
    "caliper-core/src/caliper/runner/run/portable.py": {"os.rename": 1},
    "caliper-core/src/caliper/system/ledger.py": {"os.rename": 1},  # the ledger's own record files
    "caliper-core/src/caliper/default_plugins/_assert_runner.py": {"open-w": 1},
    "caliper-core/src/caliper/default_plugins/_warm_server.py": {"os.rename": 1},
    "caliper-core/src/caliper/default_plugins/assert_judge.py": {"write_text": 1},
    "caliper-backend-claude/src/caliper_backend_claude/conversation.py": {"write_text": 1},
    "caliper-backend-claude/src/caliper_backend_claude/home.py": {"write_bytes": 1},
    "caliper-backend-codex/src/caliper_backend_codex/conversation.py": {"write_text": 1},
    "caliper-backend-codex/src/caliper_backend_codex/home.py": {"write_bytes": 1},
    "caliper-backend-hermes/src/caliper_backend_hermes/home.py": {"write_text": 2},
    "caliper-backend-gemini/src/caliper_backend_gemini/home.py": {"write_text": 2},
    "caliper-backend-gemini/src/caliper_backend_gemini/mcp_check.py": {"write_text": 1},
    "caliper-backend-gemini/src/caliper_backend_gemini/conversation.py": {"write_text": 3},
    "caliper-backend-pi/src/caliper_backend_pi/conversation.py": {"write_text": 1},
    "caliper-executor-ray/src/caliper_executor_ray/connect.py": {"open-w": 1},
}
"""Every other way a module writes a file, with how many times; all are files caliper makes
for its own use (sandboxes, caches, child processes), none a user-named output. A new one
fails :func:`test_no_module_writes_a_file_around_the_writer`: route it through
``caliper.system.output_file.write_output``, or add it here if it is no named output."""


def _writes(path: Path) -> Counter:
    found: Counter = Counter()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            base = func.value.id if isinstance(func.value, ast.Name) else None
            if func.attr in ("write_text", "write_bytes"):
                found[func.attr] += 1
            elif (base, func.attr) in WRITE_CALLS:
                found[f"{base}.{func.attr}"] += 1
        elif isinstance(func, ast.Name) and func.id == "open":
            mode = node.args[1] if len(node.args) > 1 else None
            mode = next((k.value for k in node.keywords if k.arg == "mode"), mode)
            if isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax+"):
                found["open-w"] += 1
    return found


def test_no_module_writes_a_file_around_the_writer():
    unexpected = {}
    for path in sorted(REPO.glob("caliper-*/src/**/*.py")):
        relative = path.relative_to(REPO).as_posix()
        if "/testing" in relative:  # test kits write fixtures, not outputs
            continue
        found = dict(_writes(path))
        if found and found != ALLOWED.get(relative, {}):
            unexpected[relative] = found
    assert unexpected == {}, "files written outside caliper.system.output_file (see ALLOWED)"


# -- the writer's own guarantees ---------------------------------------------------------------


def test_a_replaced_file_keeps_its_mode(tmp_path):
    target = tmp_path / "page.html"
    target.write_text("old")
    os.chmod(target, 0o640)
    write_output(target, "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]


def test_a_new_file_gets_the_umask_mode(tmp_path):
    old = os.umask(0o027)
    try:
        write_output(tmp_path / "sub" / "new.xml", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "sub" / "new.xml").st_mode) == 0o640


def test_pieces_of_text_are_written_whole_or_not_at_all(tmp_path):
    """Text given in pieces (a results file made as it is written) lands whole, in chunks;
    a piece that fails to be made leaves the old file as it was and no temporary file."""
    target = tmp_path / "run.json"
    target.write_text("the original\n")
    pieces = ["{", *(f'"k{i}": "ünï ✓ {i}", ' for i in range(20_000)), '"end": 1}\n']
    write_output(target, iter(pieces))
    assert target.read_text(encoding="utf-8") == "".join(pieces)

    def broken():
        yield "partial "
        yield "x" * 200_000  # more than one chunk reaches the temporary file
        raise RuntimeError("a piece could not be made")

    with pytest.raises(RuntimeError):
        write_output(target, broken())
    assert target.read_text(encoding="utf-8") == "".join(pieces)
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_pieces_may_be_bytes_among_text(tmp_path):
    """Bytes pieces (a records sidecar's pickles after its header line) are written as they
    are, text pieces as UTF-8, in order."""
    target = tmp_path / "mixed.bin"
    pieces = ["héader\n", b"\x80\x05raw", *(bytes([i % 256]) * 3000 for i in range(60)), "end"]
    write_output(target, iter(pieces))
    expected = b"".join(p if isinstance(p, bytes) else p.encode("utf-8") for p in pieces)
    assert target.read_bytes() == expected


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_a_full_disk_leaves_the_original_whole(tmp_path, monkeypatch, code):
    target = tmp_path / "run.json"
    target.write_text("the original\n")
    real_write = os.write

    def full_after_some(fd: int, data) -> int:
        if fd > 2:
            real_write(fd, bytes(data[:10]))  # part of it lands, then the disk is full
            raise OSError(code, os.strerror(code))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full_after_some)
    with pytest.raises(OutputWriteError) as raised:
        write_output(target, "x" * 100_000)
    monkeypatch.undo()
    assert raised.value.exit_code == 74 and raised.value.full
    assert "intact" in raised.value.message and str(target) in raised.value.message
    assert target.read_text() == "the original\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_a_folder_block_device_or_socket_is_refused(tmp_path):
    with pytest.raises(OutputWriteError, match="is a folder"):
        write_output(tmp_path, "x")


def test_a_read_only_file_cannot_be_replaced(tmp_path):
    target = tmp_path / "SKILL.md"
    target.write_text("x")
    os.chmod(target, 0o444)
    assert replace_problem(target) == "it is read-only"
    os.chmod(target, 0o644)
    assert replace_problem(target) is None
    assert [p.name for p in tmp_path.iterdir()] == ["SKILL.md"]


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare")
def test_a_full_disk_through_the_script_keeps_the_old_page(project, tmp_path):
    """``report -o`` onto a full file system (a 64 KiB tmpfs in a private mount namespace):
    exit 74, one line, the old page whole, no temporary file left."""
    mount = tmp_path / "small"
    mount.mkdir()
    script = (
        f"mount -t tmpfs -o size=64k tmpfs {mount} || exit 99\n"
        f"printf 'old page\\n' > {mount}/page.html\n"
        f"dd if=/dev/zero of={mount}/filler bs=4k count=64 2>/dev/null\n"
        f"{CALIPER} report {project['runs'][0]} --format html -o {mount}/page.html\n"
        "code=$?\n"
        f"cat {mount}/page.html; ls -a {mount}\n"
        "exit $code\n"
    )
    space: Workspace = project["space"]
    done = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode == 99:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    assert done.returncode == 74, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "no space left" in errors[0] and "intact" in errors[0]
    assert done.stdout.split()[:2] == ["old", "page"]
    assert sorted(done.stdout.split()[2:]) == [".", "..", "filler", "page.html"]


def test_caliper_tmpdir_on_a_file_is_one_clear_error(project, tmp_path):
    """``CALIPER_TMPDIR`` naming a regular file: exit 1 and a sentence naming it, not exit 70
    and ``FileExistsError``."""
    afile = tmp_path / "not-a-folder"
    afile.write_text("x")
    space: Workspace = project["space"]
    done = subprocess.run(
        [str(CALIPER), "run", project["spec"], "--model", "fake", "--k", "1"],
        cwd=space.root,
        env=space.env(CALIPER_TMPDIR=str(afile)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    first = done.stderr.splitlines()[0]
    assert first.startswith("Error: CALIPER_TMPDIR=") and "it is a file, not a folder" in first
    assert "FileExistsError" not in done.stderr and "unexpectedly" not in done.stderr
    assert afile.read_text() == "x"
