"""Plugins as an installed distribution declares them: fake ``*.dist-info`` folders on
``PYTHONPATH``, driven through the real ``caliper`` console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import caliper
from caliper.errors import UsageError
from caliper.host.plugins import PluginHost

CALIPER = Path(sys.executable).parent / "caliper"

MISSPELT = """
import caliper
from caliper.plugin.backend import Backend


class Misspelt(Backend):
    id = "misspelt"
    cli_name = "nothing-here"

    def run_attempt(self, request):
        raise AssertionError("never run")


@caliper.hookimpl
def register_backend(register):
    register(Misspelt())
"""

SPEC = "tasks:\n  - name: t\n    prompt: hi\n    assert: assert True\n"


def fake_distribution(
    root: Path, name: str, entry_points: dict[str, dict[str, str]], modules: dict[str, str]
) -> None:
    """An installed-looking distribution: ``<name>-0.1.dist-info`` and its modules in ``root``."""
    info = root / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    lines: list[str] = []
    for group, points in entry_points.items():
        lines += [f"[{group}]", *(f"{k} = {v}" for k, v in points.items()), ""]
    (info / "entry_points.txt").write_text("\n".join(lines))
    for module, text in modules.items():
        (root / f"{module}.py").write_text(text)


def run_caliper(tmp_path: Path, site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real ``caliper`` script with ``site`` on its path, in a throw-away home."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(site),
    }
    return subprocess.run(
        [str(CALIPER), *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_an_injected_plugin_with_a_misspelt_hook_is_an_error_naming_plugin_and_hook():
    module = types.ModuleType("typo_plugin")
    exec(compile(MISSPELT, "typo_plugin", "exec"), module.__dict__)
    with pytest.raises(UsageError) as info:
        PluginHost([module], use_entry_points=False)
    message = info.value.message
    assert "'typo_plugin'" in message and "'register_backend'" in message
    assert "did you mean 'register_backends'?" in message
    assert info.value.exit_code == 2


def test_a_hook_taking_an_argument_caliper_does_not_pass_is_an_error_naming_it():
    module = types.ModuleType("argument_plugin")

    @caliper.hookimpl
    def register_backends(register, config):
        raise AssertionError("never called")

    module.register_backends = register_backends  # type: ignore[attr-defined]
    with pytest.raises(UsageError) as info:
        PluginHost([module], use_entry_points=False)
    message = info.value.message
    assert "'argument_plugin'" in message and "register_backends" in message
    assert "config" in message


def test_an_optional_hook_of_another_tool_is_not_refused():
    module = types.ModuleType("optional_plugin")

    @caliper.hookimpl(optionalhook=True)
    def register_widgets(register):
        raise AssertionError("never called")

    module.register_widgets = register_widgets  # type: ignore[attr-defined]
    host = PluginHost([module], use_entry_points=False)
    assert host.backends() == {} and host.failures == []


def test_an_installed_plugin_with_a_misspelt_hook_is_a_listed_load_failure(tmp_path):
    site = tmp_path / "site"
    fake_distribution(
        site,
        "caliper-backend-misspelt",
        {"caliper.backends": {"misspelt": "misspelt_plugin"}},
        {"misspelt_plugin": MISSPELT},
    )
    listed = run_caliper(tmp_path, site, "plugins", "--no-cli-check", "--json")
    assert listed.returncode == 0, listed.stderr
    failures = json.loads(listed.stdout)["failures"]
    assert [(f["id"], f["distribution"]) for f in failures] == [
        ("misspelt", "caliper-backend-misspelt")
    ]
    assert "'register_backend'" in failures[0]["error"]
    assert "misspelt_plugin" in failures[0]["error"]

    (tmp_path / "s.eval.yaml").write_text(SPEC)
    ran = run_caliper(tmp_path, site, "run", "s.eval.yaml", "--model", "misspelt")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    said = ran.stdout + ran.stderr
    assert "Traceback" not in said
    assert "'misspelt' is installed but cannot be used" in said
    assert "'register_backend'" in said and "did you mean 'register_backends'?" in said


def _twins(site: Path, group: str, name: str) -> None:
    """Two distributions declaring ``name`` in ``group`` (importable modules that register
    nothing: caliper must load neither)."""
    for twin in ("a", "b"):
        fake_distribution(
            site,
            f"caliper-twin-{twin}",
            {group: {name: f"twin_{twin}_plugin"}},
            {f"twin_{twin}_plugin": '"""A twin that provides nothing."""\n'},
        )


def test_two_distributions_declaring_one_backend_is_an_error_naming_both(tmp_path):
    """Regression: caliper crashed (exit 70) inside stevedore's conflict resolver."""
    site = tmp_path / "site"
    _twins(site, "caliper.backends", "twin")
    listed = run_caliper(tmp_path, site, "plugins", "--no-cli-check", "--json")
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert {"caliper-twin-a", "caliper-twin-b"} <= {
        d["distribution"] for d in data["distributions"]
    }
    [failure] = data["failures"]
    assert failure["id"] == "twin"
    assert "caliper-twin-a 0.1 (module twin_a_plugin)" in failure["error"]
    assert "caliper-twin-b 0.1 (module twin_b_plugin)" in failure["error"]

    (tmp_path / "s.eval.yaml").write_text(SPEC)
    ran = run_caliper(tmp_path, site, "run", "s.eval.yaml", "--model", "twin")
    said = ran.stdout + ran.stderr
    assert ran.returncode == 2, said
    assert "Traceback" not in said
    assert "2 distributions declare the backend 'twin'" in said
    assert "caliper-twin-a" in said and "caliper-twin-b" in said


def test_two_distributions_declaring_one_judge_make_validate_name_both(tmp_path):
    site = tmp_path / "site"
    _twins(site, "caliper.judges", "verdict")
    spec = tmp_path / "s.eval.yaml"
    spec.write_text("tasks:\n  - name: t\n    prompt: hi\n    verdict: yes\n")
    checked = run_caliper(tmp_path, site, "validate", str(spec))
    said = checked.stdout + checked.stderr
    assert checked.returncode == 2, said
    assert "Traceback" not in said
    assert "2 distributions declare the judge 'verdict'" in said
    assert "caliper-twin-a" in said and "caliper-twin-b" in said


def test_a_command_reads_the_installed_metadata_once(tmp_path):
    """`caliper plugins` asks for every group; the installed packages are scanned once."""
    code = (
        "import sys\nfrom caliper import entry_points\ncalls = []\n"
        "scan = entry_points.read_entry_points\n"
        "entry_points.read_entry_points = lambda *a: calls.append(a) or scan(*a)\n"
        "from caliper.cli import main\n"
        "try:\n    main(sys.argv[1:])\nfinally:\n    print('SCANS', len(calls), file=sys.stderr)\n"
    )
    for args in (["plugins", "--no-cli-check"], ["validate", str(tmp_path / "s.eval.yaml")]):
        (tmp_path / "s.eval.yaml").write_text(SPEC)
        done = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert "SCANS 1" in done.stderr, (args, done.stderr)


def test_a_folder_added_to_sys_path_is_scanned(tmp_path, monkeypatch):
    from caliper.host.plugins import BACKENDS, installed

    assert "late" not in {e.name for e in installed(BACKENDS)}
    fake_distribution(
        tmp_path, "caliper-late", {"caliper.backends": {"late": "late_plugin"}}, {"late_plugin": ""}
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "late" in {e.name for e in installed(BACKENDS)}


def test_aliases_come_from_metadata_with_ids_winning(tmp_path, monkeypatch):
    fake_distribution(
        tmp_path,
        "caliper-backend-third",
        {
            "caliper.backends": {"third": "third_plugin", "other": "other_plugin"},
            "caliper.backend_aliases": {
                "3rd": "third_plugin",  # the one backend served by that module
                "nowhere": "missing_plugin",  # names no backend module: ignored
                "codex": "third_plugin",  # an installed id: the id wins
            },
        },
        {},
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from caliper.host.plugins import backend_names

    table = backend_names()
    assert table["3rd"] == "third" and table["other"] == "other"
    assert "nowhere" not in table
    assert table["codex"] == "codex"


DUPLICATE = """
import caliper
from caliper.plugin.backend import Backend


class Duplicate(Backend):
    id = "dup"
    cli_name = "nothing-here"

    def run_attempt(self, request):
        raise AssertionError("never run")


@caliper.hookimpl
def register_backends(register):
    register(Duplicate())
"""


def test_two_installed_plugins_registering_one_id_is_a_usage_error_naming_both(tmp_path):
    site = tmp_path / "site"
    for twin in ("a", "b"):
        fake_distribution(
            site,
            f"caliper-dup-{twin}",
            {"caliper.backends": {f"dup-{twin}": f"dup_{twin}_plugin"}},
            {f"dup_{twin}_plugin": DUPLICATE},
        )
    (tmp_path / "s.eval.yaml").write_text(SPEC)
    ran = run_caliper(tmp_path, site, "run", "s.eval.yaml", "--model", "codx-not-a-backend")
    said = ran.stdout + ran.stderr
    assert ran.returncode == 2, said
    assert "Traceback" not in said
    assert "Two plugins claim the backend id 'dup'" in said
    assert "plugin 'dup-a' (caliper-dup-a, module dup_a_plugin)" in said
    assert "plugin 'dup-b' (caliper-dup-b, module dup_b_plugin)" in said
