"""caliper.host.entry_points finds exactly the entry points importlib.metadata finds (issue 20)."""

from __future__ import annotations

import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from caliper.host import entry_points
from caliper.host.entry_points import FoundEntryPoint, read_entry_points


def _stdlib(path: list[str], prefix: str = "caliper.") -> dict[str, list[FoundEntryPoint]]:
    """What importlib.metadata itself lists for ``path`` (computed here, independently)."""
    saved = sys.path
    sys.path = list(path)
    try:
        everything = metadata.entry_points()
        found: dict[str, list[FoundEntryPoint]] = {}
        for group in sorted(g for g in everything.groups if g.startswith(prefix)):
            for ep in everything.select(group=group):
                found.setdefault(group, []).append(
                    FoundEntryPoint(group, ep.name, ep.value, ep.dist.name, ep.dist.version)
                )
        return found
    finally:
        sys.path = saved


def _dist(folder: Path, dirname: str, entry_points_txt: str | None, metadata_text: str) -> Path:
    info = folder / dirname
    info.mkdir(parents=True)
    meta = "PKG-INFO" if dirname.lower().endswith(".egg-info") else "METADATA"
    (info / meta).write_bytes(metadata_text.encode())
    if entry_points_txt is not None:
        (info / "entry_points.txt").write_bytes(entry_points_txt.encode())
    return info


def test_the_real_environment_reads_the_same(monkeypatch):
    fast = entry_points._read(sys.path, "caliper.")  # the fast reader itself, no fallback
    assert fast == _stdlib(sys.path)
    assert {"caliper.judges", "caliper.backends"} <= set(fast)
    assert fast == read_entry_points(sys.path, "caliper.")


@pytest.fixture
def site(tmp_path: Path) -> tuple[Path, Path]:
    """Two site folders full of awkward metadata."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    _dist(
        first,
        "caliper_odd-1.0.dist-info",
        "# a comment\n"
        "orphan = before.any.section\n"
        "\n"
        "[caliper.judges]\n"
        "   spaced   =   odd_judge.plugin   \n"
        "; semicolon = is.not.a.comment\n"
        "colon = pkg.mod:attr.inner [extra]\n"
        "\t\n"
        "[console_scripts]\n"
        "odd = odd.cli:main\n"
        "[ caliper.backends ]\n"
        "padded = not.the.group\n"
        "[[caliper.backends]]\n"
        "doubled = brackets.stripped\n",
        "Metadata-Version: 2.1\nname:   Caliper.Odd  \nVersion: 1.0\nSummary: x\n\nName: body\n",
    )
    # the same distribution (normalised name) again later on the path: the first one found
    # wins, the others are ignored
    _dist(
        second,
        "caliper_odd-3.0.dist-info",
        "[caliper.judges]\nshadowed = no\n",
        "Name: caliper-odd\nVersion: 3.0\n",
    )
    # first on the path but without entry points: it still hides the later one
    _dist(first, "caliper_quiet-1.0.dist-info", None, "Name: caliper-quiet\nVersion: 1\n")
    _dist(
        second,
        "caliper_quiet-2.0.dist-info",
        "[caliper.judges]\nhidden = no\n",
        "Name: caliper-quiet\nVersion: 2\n",
    )
    # egg-info (a folder), Windows line ends, no Version header
    _dist(
        second,
        "caliper_egg-0.1-py3.11.egg-info",
        "[caliper.backends]\r\negg = egg_plugin\r\n",
        "Metadata-Version: 1.0\r\nName: caliper-egg\r\n",
    )
    # a .egg folder holding EGG-INFO
    egg = second / "caliper_zapp-0.2-py3.11.egg"
    _dist(
        egg, "EGG-INFO", "[caliper.executors]\nzapp = zapp\n", "Name: caliper-zapp\nVersion: 0.2\n"
    )
    # names differing only in case and separators: one distribution (the first listed)
    _dist(
        second,
        "CALIPER__THING-1.dist-info",
        "[caliper.judges]\nthing = thing\n",
        "Name: Caliper_Thing\nVersion: 1\n",
    )
    _dist(
        second,
        "caliper_thing-2.dist-info",
        "[caliper.judges]\nthing = other\n",
        "Name: caliper-thing\nVersion: 2\n",
    )
    # a non-caliper distribution and a metadata folder that is a file
    _dist(second, "requests-2.0.dist-info", "[console_scripts]\nr = r:main\n", "Name: requests\n")
    (second / "broken-1.0.dist-info").write_text("not a folder")
    return first, second


def test_a_synthetic_site_reads_the_same(site, tmp_path, monkeypatch):
    first, second = site
    monkeypatch.chdir(first)
    path = ["", str(tmp_path / "missing"), str(second / "caliper_zapp-0.2-py3.11.egg"), str(second)]
    fast = entry_points._read(path, "caliper.")
    assert fast == _stdlib(path)
    judges = {(e.name, e.value, e.distribution, e.version) for e in fast["caliper.judges"]}
    assert ("spaced", "odd_judge.plugin", "Caliper.Odd  ", "1.0") in judges
    assert ("colon", "pkg.mod:attr.inner [extra]", "Caliper.Odd  ", "1.0") in judges
    assert ("; semicolon", "is.not.a.comment", "Caliper.Odd  ", "1.0") in judges
    assert not any(name in ("hidden", "orphan", "shadowed") for name, *_ in judges)
    assert len([name for name, *_ in judges if name == "thing"]) == 1
    assert [e.name for e in fast["caliper.backends"]] == ["doubled", "egg"]
    assert fast["caliper.executors"][0].distribution == "caliper-zapp"
    # the other order of the two folders
    swapped = [str(second), str(first)]
    assert entry_points._read(swapped, "caliper.") == _stdlib(swapped)


def test_a_zip_on_the_path_is_read_by_importlib(site, tmp_path, monkeypatch):
    first, _second = site
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("caliper_zipped-1.dist-info/METADATA", "Name: caliper-zipped\nVersion: 1\n")
        zipped.writestr("caliper_zipped-1.dist-info/entry_points.txt", "[caliper.judges]\nz = z\n")
    path = [str(archive), str(first)]
    with pytest.raises(entry_points._Unreadable):
        entry_points._read(path, "caliper.")
    found = read_entry_points(path, "caliper.")
    assert found == _stdlib(path)
    assert ("z", "caliper-zipped") in {(e.name, e.distribution) for e in found["caliper.judges"]}


def test_a_line_without_equals_fails_as_in_importlib(tmp_path):
    _dist(tmp_path, "caliper_bad-1.dist-info", "[caliper.judges]\nno equals here\n", "Name: b\n")
    with pytest.raises(TypeError):
        _stdlib([str(tmp_path)])
    with pytest.raises(TypeError):
        read_entry_points([str(tmp_path)], "caliper.")
