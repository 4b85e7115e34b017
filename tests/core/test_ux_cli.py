"""Every command's bad inputs and ``--help`` as a demanding user meets them: one clear
message, a non-zero exit, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from caliper_fakeagent.harness import CALIPER, Workspace

COMMANDS = [
    "run",
    "validate",
    "report",
    "list",
    "compare",
    "merge",
    "migrate",
    "plugins",
    "update-cli",
]

SPEC = 'tasks:\n  - name: t\n    prompt: "fake: say hi"\n    assert: "assert True"\n'


def _caliper(space: Workspace, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CALIPER), *args],
        cwd=cwd or space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    space = Workspace.create(tmp_path)
    space.spec(SPEC)
    (tmp_path / "garbage.json").write_text("{not json")
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "binary.eval.yaml").write_bytes(b"\x00\xff\xfe" * 50)
    (tmp_path / "a-file").write_text("x")
    return space


BAD_ARGS = [
    ("run", "missing.eval.yaml", "--model", "fake"),
    ("run", ".", "--model", "fake"),
    ("run", "binary.eval.yaml", "--model", "fake"),
    ("run", "demo.eval.yaml", "--model", "fake", "--k", "0"),
    ("run", "demo.eval.yaml", "--model", "fake", "--k", "-1"),
    ("run", "demo.eval.yaml", "--model", "fake", "--workers", "0"),
    ("run", "demo.eval.yaml", "--model", "fake", "--timeout", "0"),
    ("run", "demo.eval.yaml", "--model", "fake", "--timeout", "-5"),
    ("run", "demo.eval.yaml", "--model", "fake", "--setup-timeout", "0"),
    ("run", "demo.eval.yaml", "--model", "fake", "--timeout", "inf"),
    ("run", "demo.eval.yaml", "--model", "fake", "--timeout", "nan"),
    ("run", "demo.eval.yaml", "--model", "fake", "--setup-timeout", "inf"),
    ("run", "demo.eval.yaml", "--model", "fake", "--fail-fast", "-1"),
    ("run", "demo.eval.yaml", "--model", "no-such-backend:x"),
    ("run", "demo.eval.yaml", "--model", "fake", "--output", "."),
    ("run", "demo.eval.yaml", "--model", "fake", "--output", "a-file/run.json"),
    ("run", "demo.eval.yaml", "--model", "fake", "--ablate", "nope"),
    ("validate", "missing.eval.yaml"),
    ("validate", "."),
    ("validate", "binary.eval.yaml"),
    ("validate",),
    ("report",),
    ("report", "garbage.json"),
    ("report", "list.json"),
    ("report", "no-such-spec"),
    ("list", "no-such-spec"),
    ("compare", "garbage.json", "list.json"),
    ("compare", "missing.json", "missing.json"),
    ("update-cli", "no-such-backend", "--check"),
    ("no-such-command",),
]


@pytest.mark.parametrize("args", BAD_ARGS, ids=" ".join)
def test_bad_arguments_give_one_message_and_exit_non_zero(space, args):
    out = _caliper(space, *args)
    assert out.returncode != 0, out.stdout
    assert "Traceback" not in out.stderr + out.stdout
    assert "Error" in out.stderr, out.stderr
    assert out.stderr.strip(), "the user must be told what went wrong"


def test_non_finite_timeouts_are_refused_before_running(space):
    """``--timeout inf``/``nan`` once ran and saved ``Infinity``/``NaN``: invalid JSON."""
    for value in ("inf", "nan", "-inf"):
        out = _caliper(space, "run", "demo.eval.yaml", "--model", "fake", "--timeout", value)
        assert out.returncode == 2
        assert "finite number of seconds" in out.stderr or "range" in out.stderr
    assert not (space.root / ".caliper").exists()


def test_list_in_an_empty_folder_says_there_is_nothing(space, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = _caliper(space, "list", cwd=empty)
    assert out.returncode == 0
    assert "no saved runs" in (out.stdout + out.stderr).lower()


def test_compare_of_a_run_with_itself_is_refused(space):
    run = space.run(space.root / "demo.eval.yaml", "--k", "1")
    assert run.returncode == 0, run.stderr
    out = _caliper(space, "compare", str(run.results_path), "demo")
    assert out.returncode == 2
    assert "same run" in out.stderr and "Traceback" not in out.stderr


def test_a_bare_unknown_model_is_explained_not_blamed_on_the_default(space):
    """`--model nosuch` once said "no backend is called 'claude-code'. Did you mean
    'claude-code'?": it must say the name was taken as a model of the default backend."""
    out = _caliper(space, "run", "demo.eval.yaml", "--model", "nosuchmodel")
    assert out.returncode == 2
    assert "'nosuchmodel'" in out.stderr
    assert "taken as a model of the default backend 'claude-code'" in out.stderr
    assert "Did you mean 'claude-code'" not in out.stderr
    # A name one typo away from a backend is reported as that typo, with the way to force
    # the model reading.
    out = _caliper(space, "run", "demo.eval.yaml", "--model", "fak")
    assert out.returncode == 2
    assert "Did you mean 'fake'?" in out.stderr and "claude-code:fak" in out.stderr
    assert "Did you mean 'claude-code'" not in out.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_every_help_has_examples_and_exit_codes(space, command):
    out = _caliper(space, command, "--help")
    assert out.returncode == 0
    assert "Examples:" in out.stdout
    assert "Exit codes:" in out.stdout
    assert "caliper " + command in out.stdout


def test_top_level_help_names_the_common_exit_codes(space):
    out = _caliper(space, "--help")
    assert "70" in out.stdout and "CALIPER_DEBUG" in out.stdout


def test_an_unexpected_crash_is_one_line_and_exit_70(monkeypatch, capsys):
    from caliper import cli
    from caliper.commands import list_runs

    def broken(*_args, **_kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.delenv("CALIPER_DEBUG", raising=False)
    monkeypatch.setattr(list_runs.command, "callback", broken)
    assert cli.main(["list"]) == cli.EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "caliper failed unexpectedly: RuntimeError: kaboom" in err
    assert "CALIPER_DEBUG=1" in err
    monkeypatch.setenv("CALIPER_DEBUG", "1")
    with pytest.raises(RuntimeError):
        cli.main(["list"])


def test_python_module_entry_matches_console_script():
    out = subprocess.run(
        [sys.executable, "-m", "caliper.cli", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and "Commands:" in out.stdout


def _modules_after(args: list[str], cwd: Path) -> set[str]:
    """Top-level packages a fresh ``caliper ARGS`` process imported."""
    code = (
        "import sys\n"
        "from caliper.cli import main\n"
        f"main({args!r})\n"
        "print('MODULES', ' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60
    )
    line = next(x for x in out.stdout.splitlines() if x.startswith("MODULES "))
    return set(line.split()[1:])


@pytest.mark.parametrize(
    ("args", "not_imported"),
    [
        (["--help"], {"rich", "cattrs", "stevedore", "yaml", "pluggy"}),
        # a spec with local skills only: git (subprocess, tarfile) is never needed
        (["validate", "demo.eval.yaml"], {"rich", "cattrs", "subprocess", "tarfile"}),
        (["list"], {"cattrs", "stevedore"}),
        (["list", "--format", "json"], {"rich", "cattrs", "stevedore"}),
        (["plugins", "--no-cli-check", "--json"], {"rich", "cattrs"}),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "",
)
def test_fast_paths_skip_heavy_imports(space, args, not_imported):
    (space.root / ".caliper" / "results" / "demo").mkdir(parents=True)
    assert not (_modules_after(args, space.root) & not_imported)


VALIDATE_LEAVES_OUT = (
    # the plugin machinery: validate reads entry points itself and calls the judges' hook
    # directly (caliper.host.entry_points, caliper.host.direct_judges)
    "importlib.metadata",
    "email",
    "zipfile",
    "stevedore",
    "pluggy",
    # what only running needs
    "caliper.plugin.attempt",
    "caliper.plugin.backend",
    "caliper.plugin.conversation",  # only for a task with `history:`
    "hashlib",  # validate shows no hash of the spec or its skills
    "caliper.spec.gitcache",  # the spec has local skills only
    "caliper.spec.conversation",
    "caliper.spec.mcpspec",  # the spec has no `mcp:` block
    "caliper.plugin.verdict",  # what a check takes and returns: validate runs no check
    "encodings.utf_8_sig",  # a byte-order mark is dropped without the codec
    "caliper_judge_llm.prompt",
    "caliper_judge_llm.verdict",
    "tempfile",
    "json",
    "subprocess",
    "rich",
    "cattrs",
)


def test_validate_through_the_script_imports_no_plugin_machinery(tmp_path):
    """The real console script (run as ``__main__`` by runpy) lists every module it had
    imported when it exited; none of those validate does not need is among them (issue 20).
    (``-X importtime`` would miss modules imported through ``importlib.import_module``.)"""
    skill = tmp_path / "skills" / "shout"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: shout\ndescription: Greets loudly.\n---\nDo it.\n")
    (tmp_path / "v.eval.yaml").write_text(
        "skills:\n  - ./skills/shout\ntasks:\n"
        "  - name: a\n    prompt: hi\n    assert: assert True\n    expect: It greeted.\n"
        "  - name: b\n    prompt: hi\n    activates: [shout]\n"
    )
    code = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: print('MODULES', *sorted(sys.modules), file=sys.stderr))\n"
        "atexit.register(lambda: print('CLASSES', *sorted(\n"
        "    f'{n}.{k}' for n, m in list(sys.modules.items()) if n.startswith('caliper')\n"
        "    for k, v in vars(m).items() if hasattr(v, '__attrs_attrs__')\n"
        "    and v.__module__ == n), file=sys.stderr))\n"
        "sys.argv = [sys.argv[1], 'validate', 'v.eval.yaml']\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(CALIPER)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "valid: 2 tasks, 1 skill" in done.stdout
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    imported = set(line.split()[1:])
    # the judges were loaded (so the check below is about a real validate)
    judges = ("caliper.default_plugins.assert_judge", "caliper_judge_llm.plugin")
    assert {*judges, "caliper.default_plugins.activation_judge"} <= imported
    assert {"click", "yaml", "attrs"} <= imported
    heavy = sorted(
        m for m in imported if any(m == x or m.startswith(x + ".") for x in VALIDATE_LEAVES_OUT)
    )
    assert heavy == []
    # each attrs class costs ~0.5 ms to create: validate makes only those checking a spec needs
    line = next(x for x in done.stderr.splitlines() if x.startswith("CLASSES "))
    assert set(line.split()[1:]) == VALIDATE_ATTRS_CLASSES


VALIDATE_ATTRS_CLASSES = {
    "caliper.plugin.judge.ValueProblem",
    "caliper.host.plugins.LoadFailure",
    "caliper.host.plugins.PluginEntry",
    "caliper.system.skill_tree.SkillTree",
    "caliper.system.skill_tree.TreeFile",
    "caliper.system.skill_tree.TreeIssue",
    "caliper.plugin.skills.ResolvedSkill",
    "caliper.spec.frontmatter.FrontmatterCheck",
    "caliper.spec.frontmatter.SkillFrontmatter",
    "caliper.spec.load.SpecCheck",
    "caliper.plugin.mcp_server.McpServer",
    "caliper.spec.model.Sandbox",
    "caliper.spec.model.SkillSource",
    "caliper.spec.model.Spec",
    "caliper.spec.model.Task",
    "caliper.spec.problems.Problem",
    "caliper.spec.skills.InstallSummary",
    "caliper.spec.skills.SourceOutcome",
    "caliper.spec.tasks.Neighbourhood",
    "caliper.spec.yamldoc.Document",
}
"""The attrs classes ``caliper validate`` of a plain spec creates: the spec model, what
checking it reports, and the plugin entries the judges are loaded from (issue 20)."""


def test_plugins_text_shows_brackets_in_plugin_errors_verbatim(capsys):
    """Plugin-provided text is shown as-is: a ``[/x]`` in an error is not rich markup."""
    from caliper.commands.plugins import _render

    data = {
        "distributions": [{"distribution": "d[/x]", "version": "1", "provides": []}],
        "backends": [
            {
                "id": "b",
                "aliases": [],
                "supports_mcp": False,
                "cli": "b-cli",
                "cli_found": False,
                "cli_error": "bad path [/oops] here",
            }
        ],
        "judges": [{"key": "k", "uses_llm": False, "scores_outcome": True, "summary": "[b]s"}],
        "failures": [
            {"kind": "backends", "id": "z", "distribution": "zd", "error": "Boom [/red] x"}
        ],
    }
    _render(data, verbose=True)
    out = capsys.readouterr().out
    assert "bad path [/oops] here" in out and "Boom [/red] x" in out and "[b]s" in out


def test_a_missing_default_backend_does_not_quote_a_flag_never_typed(space):
    """Without --model the message once read "--model 'claude-code': no installed backend is
    called 'claude-code'", as if the user had typed it."""
    out = _caliper(space, "run", "demo.eval.yaml", "--k", "1")
    assert out.returncode == 2
    assert "No --model was given, so the default backend 'claude-code' was picked" in out.stderr
    assert "--model 'claude-code'" not in out.stderr
    (space.root / "judged.eval.yaml").write_text(
        'tasks:\n  - name: t\n    prompt: "fake: say hi"\n    expect: "fake-judge: pass"\n'
    )
    # without --judge-model the judge follows --model, so it never falls back to claude-code
    out = _caliper(space, "run", "judged.eval.yaml", "--model", "fake", "--k", "1")
    assert out.returncode == 0, out.stderr
    assert "claude-code" not in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize(
    "args", [("plugins", "--no-cli-check"), ("update-cli", "fake", "--check")], ids=" ".join
)
def test_format_json_works_like_everywhere_else(space, args):
    """``plugins`` and ``update-cli`` take ``--format json`` as well as ``--json``."""
    import json

    both = [_caliper(space, *args, "--json"), _caliper(space, *args, "--format", "json")]
    for out in both:
        assert out.returncode == 0, out.stderr
    assert json.loads(both[0].stdout) == json.loads(both[1].stdout)
