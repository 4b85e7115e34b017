"""``scripts/setup`` leaves compiled bytecode in the venv and the workspace sources even when
``PYTHONDONTWRITEBYTECODE=1`` is set, so no later command compiles modules first."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "setup"


def load_setup() -> ModuleType:
    """``scripts/setup`` as a module (it has no ``.py`` suffix)."""
    loader = importlib.machinery.SourceFileLoader("setup_script", str(SCRIPT))
    spec = importlib.util.spec_from_loader("setup_script", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def fake_venv(root: Path) -> Path:
    """A venv-shaped folder whose ``bin/python`` is this interpreter."""
    venv = root / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    site = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    site.mkdir(parents=True)
    return venv


def test_compile_sources_writes_bytecode_of_the_editable_sources_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup = load_setup()
    checkout = tmp_path / "checkout"
    member = checkout / "member" / "src"
    (member / "pkg" / "sub").mkdir(parents=True)
    sources = [member / "pkg" / "__init__.py", member / "pkg" / "sub" / "mod.py"]
    for source in sources:
        source.write_text("VALUE = 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "elsewhere.py").write_text("VALUE = 2\n")
    venv = fake_venv(checkout)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "_member.pth").write_text(f"{member}\n")
    (site / "other.pth").write_text(f"# a comment\nimport os\n{outside}\n{checkout / 'gone'}\n")
    monkeypatch.setattr(setup, "ROOT", checkout)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")

    assert setup.editable_sources(venv) == [member]
    setup.compile_sources(venv)

    for source in sources:
        assert Path(importlib.util.cache_from_source(str(source))).is_file(), source
    assert not (outside / "__pycache__").exists()


def test_compile_sources_without_editable_installs_runs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup = load_setup()
    venv = fake_venv(tmp_path)
    (venv / "bin" / "python").unlink()  # running it would fail: nothing may run
    monkeypatch.setattr(setup, "ROOT", tmp_path)
    setup.compile_sources(venv)


@pytest.mark.slow
def test_sync_restores_bytecode_under_dont_write_bytecode(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real ``uv sync`` of this checkout, with one site-packages and one workspace ``.pyc``
    removed first: both are back afterwards although Python was told not to write bytecode."""
    setup = load_setup()
    venv = ROOT / ".venv"
    uv = ROOT / ".tools" / "bin" / "uv"
    if not uv.exists() or not venv.is_dir():
        pytest.skip("needs scripts/setup to have run in this checkout")
    import yaml

    import caliper

    removed = [
        Path(importlib.util.cache_from_source(yaml.__file__)),
        Path(importlib.util.cache_from_source(caliper.__file__)),
    ]
    for pyc in removed:
        pyc.unlink(missing_ok=True)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    base = getattr(sys, "_base_executable", None) or sys.executable
    setup.sync(uv.resolve(), os.path.realpath(base))
    for pyc in removed:
        assert pyc.is_file(), pyc
