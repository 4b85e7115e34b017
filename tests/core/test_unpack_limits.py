"""The one bounded unpacker (``caliper.spec.safetar``): total size, compression ratio and entry
count are limited while the headers are read, before anything is written; ``caliper regrade``
of a kept working directory that is a compression bomb is refused at once (exit 2, the archive
and the limit named)."""

from __future__ import annotations

import gzip
import io
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from caliper.spec import safetar
from caliper.spec.safetar import ArchiveTooBig, UnpackLimits
from caliper_fakeagent.harness import CALIPER, Workspace

BOMB_BYTES = 2 * 1024**3


def write_bomb(path: Path) -> int:
    """A ~2 MB ``.tar.gz`` of one file of 2 GiB of zeros (gzip members in a row); its size."""
    info = tarfile.TarInfo("big.bin")
    info.size = BOMB_BYTES
    chunk = gzip.compress(b"\0" * (16 * 1024 * 1024), compresslevel=9)
    with path.open("wb") as out:
        out.write(gzip.compress(info.tobuf(format=tarfile.GNU_FORMAT)))
        for _ in range(BOMB_BYTES // (16 * 1024 * 1024)):
            out.write(chunk)
        out.write(gzip.compress(b"\0" * 1024))
    return path.stat().st_size


def _tar(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_a_bomb_is_refused_before_a_byte_is_written(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.tar.gz"
    assert write_bomb(bomb) < 4 * 1024 * 1024
    tree = tmp_path / "tree"
    started = time.monotonic()
    with pytest.raises(ArchiveTooBig) as caught:
        safetar.extract(bomb, tree)
    assert time.monotonic() - started < 5
    assert str(bomb) in str(caught.value) and "CALIPER_UNPACK_MAX_RATIO" in str(caught.value)
    assert not (tree / "big.bin").exists()


def test_each_limit_is_enforced_and_named(tmp_path: Path) -> None:
    files = {f"f{i}.txt": b"x" * 1000 for i in range(5)}
    archive = _tar(tmp_path / "five.tar.gz", files)
    with pytest.raises(ArchiveTooBig, match="CALIPER_UNPACK_MAX_ENTRIES=3"):
        safetar.extract(archive, tmp_path / "a", limits=UnpackLimits(max_entries=3))
    with pytest.raises(ArchiveTooBig, match="CALIPER_UNPACK_MAX_BYTES=2500"):
        safetar.extract(archive, tmp_path / "b", limits=UnpackLimits(max_bytes=2500))
    safetar.extract(archive, tmp_path / "c", limits=UnpackLimits(max_entries=5, max_bytes=5000))
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == sorted(files)
    zeros = _tar(tmp_path / "zeros.tar.gz", {"z": b"\0" * (20 * 1024 * 1024)})
    with pytest.raises(ArchiveTooBig, match="CALIPER_UNPACK_MAX_RATIO=10"):
        safetar.extract(zeros, tmp_path / "d", limits=UnpackLimits(max_ratio=10))
    safetar.extract(zeros, tmp_path / "e", limits=UnpackLimits(max_ratio=0))  # 0: off
    assert (tmp_path / "e" / "z").stat().st_size == 20 * 1024 * 1024


def test_limits_come_from_the_environment() -> None:
    limits = UnpackLimits.from_env(
        {
            "CALIPER_UNPACK_MAX_BYTES": "1_000",
            "CALIPER_UNPACK_MAX_RATIO": "7.5",
            "CALIPER_UNPACK_MAX_ENTRIES": "0",
        }
    )
    assert limits == UnpackLimits(max_bytes=1000, max_ratio=7.5, max_entries=0)
    assert UnpackLimits.from_env({}) == UnpackLimits()
    with pytest.raises(ValueError, match="CALIPER_UNPACK_MAX_BYTES"):
        UnpackLimits.from_env({"CALIPER_UNPACK_MAX_BYTES": "lots"})


def test_regrade_of_a_bomb_archive_is_refused_at_once(tmp_path: Path) -> None:
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: writes
            prompt: "fake: write out.txt alpha"
            assert: "assert open('out.txt').read().strip() == 'alpha'"
        """)
    parent = space.run(spec, "--k", "1", "--keep-workdirs")
    assert parent.returncode == 0, parent.stderr
    (attempt,) = parent.attempts("writes")
    assert parent.results_path is not None
    archive = parent.results_path.parent / attempt["workdir_archive"]
    write_bomb(archive)
    started = time.monotonic()
    done = subprocess.run(
        [str(CALIPER), "regrade", str(parent.results_path)],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert time.monotonic() - started < 30
    assert done.returncode == 2, done.stderr
    assert archive.name in done.stderr and "CALIPER_UNPACK_MAX_RATIO" in done.stderr
    assert "Traceback" not in done.stderr
    assert not list(space.sandboxes.glob("**/big.bin"))
