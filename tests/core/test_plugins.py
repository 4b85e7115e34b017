"""The plugin host: entry-point discovery, lazy loading, collisions and failure reporting."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

import caliper
from caliper.errors import CaliperError
from caliper.host.engine import resolve_engine
from caliper.host.plugins import BACKENDS, JUDGES, PluginHost, backend_names, installed
from caliper.plugin.backend import Backend


class _Backend(Backend):
    cli_name = "nothing-here"

    def __init__(self, ident: str, aliases: tuple[str, ...] = ()):
        self.id = ident
        self.aliases = aliases

    def run_attempt(self, request):  # pragma: no cover - never run here
        raise AssertionError("not used")


def _plugin(name: str, *backends: Backend) -> types.ModuleType:
    module = types.ModuleType(name)

    @caliper.hookimpl
    def register_backends(register):
        for backend in backends:
            register(backend)

    module.register_backends = register_backends  # type: ignore[attr-defined]
    return module


def test_entry_points_are_listed_without_importing_plugins():
    names = {entry.name for entry in installed(BACKENDS)}
    assert {"claude-code", "codex", "pi", "hermes", "fake"} <= names
    assert {"assert", "activates", "expect"} <= {e.name for e in installed(JUDGES)}
    code = (
        "import sys; from caliper.host.plugins import installed, GROUPS\n"
        "[installed(g) for g in GROUPS]\n"
        "print(sorted(m for m in sys.modules if m.startswith('caliper_')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_two_plugins_claiming_one_id_is_an_error_naming_both():
    host = PluginHost(
        [_plugin("first_plugin", _Backend("dup")), _plugin("second_plugin", _Backend("dup"))],
        use_entry_points=False,
    )
    with pytest.raises(CaliperError) as info:
        host.backends()
    assert "first_plugin" in info.value.message and "second_plugin" in info.value.message


def test_a_plugin_whose_hook_raises_is_reported_not_fatal():
    broken = types.ModuleType("broken_plugin")

    @caliper.hookimpl
    def register_backends(register):
        raise RuntimeError("boom")

    broken.register_backends = register_backends  # type: ignore[attr-defined]
    host = PluginHost([broken, _plugin("good_plugin", _Backend("good"))], use_entry_points=False)
    assert list(host.backends()) == ["good"]
    assert any("boom" in failure.error for failure in host.failures)


def _ordered_plugin(name: str, calls: list[str], **marks: bool) -> types.ModuleType:
    module = types.ModuleType(name)

    @caliper.hookimpl(**marks)
    def register_backends(register):
        calls.append(name)
        register(_Backend(name))

    module.register_backends = register_backends  # type: ignore[attr-defined]
    return module


def test_register_hooks_are_called_through_pluggy_in_its_order():
    """tryfirst/trylast decide the order (it was the order the implementations were stored)."""
    calls: list[str] = []
    host = PluginHost(
        [
            _ordered_plugin("first", calls, tryfirst=True),
            _ordered_plugin("middle", calls),
            _ordered_plugin("last", calls, trylast=True),
        ],
        use_entry_points=False,
    )
    assert list(host.backends()) == ["first", "middle", "last"]
    assert calls == ["first", "middle", "last"]


def test_register_hook_calls_reach_pluggys_monitoring():
    """A hook called through pluggy is seen by its tracing and call monitoring."""
    host = PluginHost([_plugin("monitored", _Backend("seen"))], use_entry_points=False)
    before: list[tuple[str, list[str]]] = []
    host.manager.add_hookcall_monitoring(
        lambda name, impls, kwargs: before.append((name, [i.plugin_name for i in impls])),
        lambda outcome, name, impls, kwargs: None,
    )
    assert list(host.backends()) == ["seen"]
    assert before == [("register_backends", ["monitored"])]


def test_load_by_name_imports_only_that_plugin():
    code = (
        "import sys; from caliper.host.plugins import PluginHost\n"
        "host = PluginHost(); host.load('caliper.judges', ['expect'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('caliper_')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout.strip().replace("'", '"'))
    assert "caliper_judge_llm" in loaded
    assert not [m for m in loaded if m.startswith("caliper_backend_")]


@pytest.mark.parametrize(
    ("text", "backend", "imported"),
    [
        ("claude", "claude-code", ["caliper_backend_claude"]),
        ("claude-code:claude-haiku-4-5", "claude-code", ["caliper_backend_claude"]),
        ("codex", "codex", ["caliper_backend_codex"]),
    ],
)
def test_an_id_or_alias_imports_only_its_backend(text, backend, imported):
    """Regression: `--model claude` (an alias) imported every backend plugin."""
    code = (
        "import sys; from caliper.host.engine import resolve_engine\n"
        "from caliper.host.plugins import PluginHost\n"
        f"print(resolve_engine(PluginHost(), {text!r}).backend_id)\n"
        "print(sorted(m for m in sys.modules if m.startswith('caliper_backend_') and '.' not in m))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == [backend, repr(imported)]


def test_a_bare_model_still_finds_the_backend_that_claims_it():
    host = PluginHost()
    assert resolve_engine(host, "gpt-5.5").backend_id == "codex"
    assert resolve_engine(host, "claude-sonnet-5").backend_id == "claude-code"


def test_every_backends_aliases_are_declared_in_its_entry_point_metadata():
    """The table `--model` reads before importing anything agrees with what backends say."""
    from_metadata: dict[str, set[str]] = {}
    for name, ident in backend_names().items():
        if name != ident:
            from_metadata.setdefault(ident, set()).add(name)
    backends = PluginHost().backends()
    assert {"claude-code", "codex", "pi", "hermes", "fake"} <= set(backends)
    for ident, backend in backends.items():
        assert set(backend.aliases) == from_metadata.get(ident, set()), ident


def test_caliper_load_plugins_limits_what_loads(monkeypatch):
    monkeypatch.setenv("CALIPER_LOAD_PLUGINS", "codex,expect")
    assert [e.name for e in installed(BACKENDS)] == ["codex"]
    assert [e.name for e in installed(JUDGES)] == ["activates", "assert", "expect", "tools"]
    assert backend_names() == {"codex": "codex"}
    monkeypatch.setenv("CALIPER_LOAD_PLUGINS", "")
    assert installed(BACKENDS) == []


@pytest.mark.parametrize("allowed", ["", "expect", "claude-code,codex"])
def test_the_built_in_judges_cannot_be_switched_off(monkeypatch, allowed):
    monkeypatch.setenv("CALIPER_LOAD_PLUGINS", allowed)
    assert [e.name for e in installed(JUDGES) if e.distribution == "caliper-core"] == [
        "activates",
        "assert",
        "tools",
    ]
    host = PluginHost()
    assert {"assert", "activates", "tools"} <= set(host.judges())
    assert ("expect" in host.judges()) == ("expect" in allowed)


def test_help_imports_no_plugin():
    code = (
        "import sys\nfrom caliper.cli import main\nmain(['--help'])\n"
        "print('LOADED', sorted(m for m in sys.modules if m.startswith('caliper_')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "LOADED []" in out.stdout


def test_help_does_not_read_plugin_metadata_or_import_stevedore():
    code = (
        "import sys\nfrom caliper.cli import main\ntry:\n    main(['--help'])\n"
        "except SystemExit:\n    pass\nheavy = ('stevedore', 'caliper.host.plugins', "
        "'importlib.metadata')\nprint('HEAVY', [m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in out.stdout


def test_plugins_command_lists_every_first_party_plugin_as_json():
    from caliper.cli import main

    out = subprocess.run(
        [sys.executable, "-c", "from caliper.cli import main; main(['plugins', '--json'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(out.stdout)
    dists = {d["distribution"] for d in data["distributions"]}
    assert {"caliper-core", "caliper-judge-llm", "caliper-backend-claude"} <= dists
    assert {j["key"] for j in data["judges"]} >= {"assert", "activates", "expect"}
    assert main is not None


def test_version_lists_plugins():
    out = subprocess.run(
        [sys.executable, "-c", "from caliper.cli import main; main(['--version'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.startswith(f"caliper {caliper.__version__}")
    assert "caliper-judge-llm" in out.stdout


def test_copy_skill_tree_leaves_out_specs_results_and_git(tmp_path):
    from caliper.plugin.backend import copy_skill_tree
    from caliper.plugin.skills import ResolvedSkill

    source = tmp_path / "skill"
    (source / ".caliper" / "results").mkdir(parents=True)
    (source / ".git").mkdir()
    (source / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\n")
    (source / "s.eval.yaml").write_text("tasks: []\n")
    (source / "scripts").mkdir()
    (source / "scripts" / "run.sh").write_text("echo hi\n")
    target = tmp_path / "installed"
    copy_skill_tree(ResolvedSkill("s", "d", source), target)
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == [
        "SKILL.md",
        "scripts",
        "scripts/run.sh",
    ]


def test_subcommand_exit_codes_reach_the_shell(tmp_path):
    missing = tmp_path / "nope.eval.yaml"
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from caliper.cli import main; sys.exit(main())",
            "validate",
            str(missing),
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
