"""The layout's rules, checked on the source: who may import whom, no import circles, no long
functions, the plugin face is what the API reference documents, and old module paths still work.

The rules (docs/architecture.md, "The rooms"):

* a plugin distribution (``caliper-backend-*``, ``caliper-judge-*``, ``caliper-executor-*``,
  ``examples/backend-*``) imports Caliper only through ``caliper.plugin``, ``caliper.remote``
  and ``caliper.testing`` (and the bare ``caliper`` package, for ``caliper.hookimpl``);
* ``caliper/plugin/`` imports nothing of Caliper above it but ``caliper.system`` and
  ``caliper.errors`` (imports for type checkers included);
* ``caliper/system/`` imports only ``caliper.system`` and ``caliper.errors``;
* no import circle between core modules (imports for type checkers left out);
* no function over 80 lines, click command bodies aside;
* imports at the module's head: one inside a function is for a module in
  :data:`DEFERRED_IMPORTS`, which says what start-up it keeps light or what circle it breaks.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "caliper-core" / "src"
CALIPER = CORE / "caliper"
PLUGIN_SOURCES = sorted(
    [
        *ROOT.glob("caliper-backend-*/src"),
        *ROOT.glob("caliper-judge-*/src"),
        *ROOT.glob("caliper-executor-*/src"),
        *ROOT.glob("examples/backend-*/src"),
    ]
)
PLUGIN_MAY_IMPORT = ("caliper.plugin", "caliper.remote", "caliper.testing")
LONGEST_FUNCTION = 80

STILL_LONG: set[str] = set()
"""Functions over the limit that are still to be split (``path::name``): may only shrink."""

DEFERRED_IMPORTS: dict[str, str] = {
    # imported module (or "path::module", the path under caliper/): why it is imported where
    # it is used, not at the head. The start-ups named are those the tests measure:
    # tests/core/test_ux_cli.py, test_run_first_spawn.py, test_quick_exit.py,
    # test_judge_contract.py, test_plugins.py, tests/report_html/test_html_units.py.
    # -- the command line: `caliper --help` and each command's start-up
    "cli.py::caliper.commands.help_order": "`caliper --help` lists the commands without it",
    "cli.py::caliper.system.os_errors": "only for an OSError that reaches the command line",
    "cli.py::caliper.system.quick_exit": "only for the commands that end without teardown",
    "difflib": "only for a 'did you mean' after a mistyped name or key",
    "caliper.commands.run_start": "`caliper run --help` without the run's start-up",
    "caliper.commands.resume_pair": "`caliper run` starts its first agent without --resume",
    "caliper.commands.run_baseline": "`caliper run` starts its first agent without --baseline",
    "caliper.commands.history": "`caliper report` on a run, not on a spec's history",
    "caliper.commands.matrix_report": "`caliper report` on a run, not on a matrix",
    "caliper.commands.list_runs": "`caliper history --help` without the run listing",
    "caliper.replay.probe": "`caliper validate` without --probe runs no agent",
    "caliper.runner.attempt.judge_calls": "`caliper validate` without --probe calls no judge",
    "caliper.runner.run.options": "`caliper validate` without --probe builds no run options",
    "json": "`caliper validate` and `--help`s read and write no JSON",
    # -- the plugin machinery (pluggy, stevedore, entry points)
    "caliper.host.plugins": "the plugin host: `--help`, `list`, `history`, `report --help`"
    " and `run --help` load no plugin",
    "caliper.plugin.hookspecs": "validate and installed() read entry points without pluggy",
    "pluggy": "validate and installed() read entry points without the plugin manager",
    "stevedore": "validate and installed() read entry points without stevedore",
    "importlib.metadata": "validate finds the judges' entry points without the metadata scan",
    "caliper.host.install_hints": "only for the message about a missing plugin or CLI",
    "caliper.host.engine": "the judge engine is resolved when a check first asks for it",
    "caliper.default_plugins.local_executor": "`caliper run --help` without the executor",
    "plugin/judge.py::caliper.plugin.verdict": "the check-time types, made on first use: the"
    " judge contract imports without them",
    "report/html/__init__.py::caliper.report.html.pages": "importing the package does not"
    " import Jinja2",
    # -- what a check needs: `caliper validate` loads the judges and runs none
    "caliper.plugin.verdict": "`caliper validate` loads the judges and runs no check",
    "caliper.plugin.tools": "the tool-call records: validate and `plugins` read none",
    "caliper.plugin.private_files": "an assert's private files: validate runs no check",
    "caliper.default_plugins.warm_assert": "the warm assert server: validate runs no check",
    "caliper.default_plugins.tools_spec": "the tools check's parser: validate runs no check",
    "caliper.system.process": "an assert's process: validate runs no check",
    "tempfile": "validate, `list` and `history` make no temporary file",
    "hashlib": "validate and `list` show no hash of a spec, skill or run",
    "caliper.plugin.cli_versions": "the CLI version probe runs after the first agent starts",
    "caliper.system.skill_tree": "the skill copy: `plugins` and `report` install no skill",
    "caliper.system.ledger": "the process ledger: `plugins` and `report` start no agent",
    # -- a spec's optional parts
    "caliper.spec.gitcache": "git (subprocess, tarfile) only for a spec with git skills",
    "caliper.spec.conversation": "only for a task with `history:`",
    "caliper.spec.mcpspec": "only for a spec with an `mcp:` block",
    "caliper.spec.yamldoc": "only for a --min-score file written as YAML",
    # -- the run: its first agent starts before the journal, the display and the report
    "caliper.runner.run.compose": "importing a caliper.runner module does not compose a run",
    "caliper.runner.run.journaling": "the journal is opened once the first agents are out",
    "caliper.results.journal": "the journal is opened once the first agents are out",
    "caliper.results.codec": "cattrs: after the first agent, and `list` reads no whole run",
    "caliper.results.models": "the record classes are made once an attempt ends: the first"
    " agent starts without them",
    "caliper.results.runlock": "the run's lock is taken once the first agents are out",
    "caliper.runner.progress": "the live display starts after the first agent",
    "caliper.runner.matrix_progress": "the matrix's live display starts after the first agent",
    "caliper.runner.attempt.workdirs": "the kept-workdir copy, after the first agent",
    "caliper.runner.run.portable": "the bundle is packed only when an executor asks for it",
    "caliper.runner.adaptive": "only for --k auto",
    "caliper.runner.shard": "only for --shard",
    "caliper.runner.matrix": "only for a matrix run",
    "caliper.results.matrix": "only for a matrix run",
    "caliper.runner.run.control": "the run's control, for an interrupted run's message only",
    "caliper.results.gate": "only for --min-score / --min-activation",
    "caliper.results.gate_spend": "only for --max-cost-per-pass",
    "caliper.results.scoring": "only for a gate or a report, after the first agent",
    "caliper.results.sequential": "only for a sequential gate",
    "caliper.results.exact_binomial": "only for a gate with few attempts",
    "caliper.results.store": "`--help`s of report, history and run read no saved run",
    "caliper.results.legacy": "only for a results file of an earlier version",
    "caliper.results.run_summary": "the run summaries, for listing runs only",
    "caliper.results.records_cache": "the records sidecar, for reading a run without its turns",
    "caliper.results.meta_labels": "`caliper history --help` without the run labels",
    "caliper.results.run_clock": "`caliper report --help` without the run clock",
    "caliper.results.spend": "the spend figures, for a report that shows them",
    "caliper.results.stats": "`caliper history --help` without the statistics",
    "caliper.system.output_file": "only when an output file is written",
    # -- the reports (rich, Jinja2): only the output asked for
    "caliper.report": "the report package (rich), after the first agent or for text output",
    "caliper.report.run_view": "the final report, after the first agent or for text output",
    "caliper.report.gate_view": "only for a gate's verdict",
    "caliper.report.junit": "only for --junit",
    "caliper.report.markdown": "only for --format markdown",
    "caliper.commands.compare_baseline": "`caliper compare` of two runs without the baseline "
    "machinery (the runner, the spec loader)",
    "caliper.report.markdown_compare": "only for `compare --format markdown`",
    "caliper.report.junit_compare": "only for `compare --junit`",
    "caliper.report.matrix_view": "only for a matrix run's report",
    "caliper.report.list_view": "only for `caliper list` in text",
    "caliper.report.attempt_table": "only for `caliper report --attempts`",
    "caliper.report.spend_view": "only for a run that has spend figures",
    "caliper.report.tool_usage_view": "only for a run with tool calls",
    "caliper.report.html": "Jinja2 only for --format html",
    "caliper.report.html.output": "Jinja2 only for --format html",
    "caliper.report.html.pages": "Jinja2 only for --format html",
    "caliper.report.html.history_output": "Jinja2 only for --format html",
    "rich.box": "rich only when a table is drawn with it",
    "rich.cells": "rich only when a table is drawn with it",
    "rich.console": "rich only when a console is made (importing caliper.report does not)",
    "rich.highlighter": "rich only when the report is drawn (warmed while the agents run)",
    "rich.markup": "rich only when a table is drawn with it",
    "rich.measure": "rich only when a table is drawn with it",
    "rich.panel": "rich only when a panel is drawn by rich",
    "rich.segment": "rich only when a console is made (importing caliper.report does not)",
    "rich.table": "rich only when a table is drawn with it",
    "rich.text": "rich only when a table is drawn with it",
    # -- a script run as a process of its own, which starts on the standard library only
    "default_plugins/_warm_server.py::traceback": "only for a failed assert's traceback",
}
"""Modules imported inside a function in core (``caliper/testing/`` aside), and why."""


def _python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """The ids of every node inside an ``if TYPE_CHECKING:`` block."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            inside.update(id(child) for child in ast.walk(node))
    return inside


def _imports(path: Path, *, type_checking: bool = True) -> Iterator[tuple[int, str, list[str]]]:
    """``(line, module, imported names)`` for every absolute import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set() if type_checking else _type_checking_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []


def _caliper_targets(module: str, names: list[str]) -> list[str]:
    """What an import reaches in Caliper: ``from caliper import x`` reaches ``caliper.x``."""
    if module == "caliper" and names:
        return [f"caliper.{name}" for name in names]
    return [module]


def _outside(target: str, allowed: tuple[str, ...]) -> bool:
    if not (target == "caliper" or target.startswith("caliper.")):
        return False
    if target in ("caliper", "caliper.hookimpl", "caliper.PROJECT_NAME", "caliper.__version__"):
        return False
    return not any(target == room or target.startswith(room + ".") for room in allowed)


def _violations(files: list[Path], allowed: tuple[str, ...]) -> list[str]:
    found = []
    for path in files:
        for line, module, names in _imports(path):
            for target in _caliper_targets(module, names):
                if _outside(target, allowed):
                    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                    found.append(f"{where}:{line}: imports {target}")
    return found


def test_plugin_distributions_import_only_the_plugin_face():
    files = [path for source in PLUGIN_SOURCES for path in _python_files(source)]
    assert len(PLUGIN_SOURCES) >= 7, PLUGIN_SOURCES  # four backends, judge, executor, example
    assert _violations(files, PLUGIN_MAY_IMPORT) == []


def test_the_plugin_room_imports_nothing_above_it():
    allowed = ("caliper.plugin", "caliper.system", "caliper.errors")
    assert _violations(_python_files(CALIPER / "plugin"), allowed) == []


def test_the_system_room_imports_only_itself_and_errors():
    allowed = ("caliper.system", "caliper.errors")
    assert _violations(_python_files(CALIPER / "system"), allowed) == []


def test_the_rule_catches_an_import_from_outside(tmp_path):
    """The checker itself: a plugin file importing the runner is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from caliper.plugin import Backend\n"
        "from caliper import runner\n"
        "def f():\n    import caliper.system.process\n"
    )
    found = _violations([bad], PLUGIN_MAY_IMPORT)
    assert [item.rsplit(": ", 1)[1] for item in found] == [
        "imports caliper.runner",
        "imports caliper.system.process",
    ]


def _module_name(path: Path) -> str:
    parts = path.relative_to(CORE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    modules = {_module_name(path): path for path in _python_files(CALIPER)}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        reached: set[str] = set()
        for _, module, names in _imports(path, type_checking=False):
            targets = [f"{module}.{n}" for n in names if f"{module}.{n}" in modules]
            if len(targets) < len(names) or not names:
                targets.append(module)
            reached.update(t for t in targets if t in modules and t not in (name, "caliper"))
        graph[name] = reached
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_no_import_circle_in_core():
    assert _circles(_import_graph()) == []


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _circles(graph) == [["a", "b", "c"]]


def _is_click_command(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(
        ast.unparse(decorator).split("(")[0].endswith(("command", "group"))
        for decorator in node.decorator_list
    )


def _long_functions() -> dict[str, int]:
    found = {}
    sources = [CALIPER, *PLUGIN_SOURCES]
    for source in sources:
        for path in _python_files(source):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > LONGEST_FUNCTION and not _is_click_command(node):
                    found[f"{path.relative_to(ROOT)}::{node.name}"] = length
    return found


def test_no_function_over_eighty_lines():
    long = _long_functions()
    assert {name: n for name, n in long.items() if name not in STILL_LONG} == {}
    assert set(long) >= STILL_LONG, "split already: take these off STILL_LONG"


def _imported_module(module: str, name: str | None) -> str:
    """What ``from module import name`` imports: the submodule when ``name`` is one."""
    if name is None:
        return module
    try:
        found = importlib.util.find_spec(f"{module}.{name}") is not None
    except (ImportError, ValueError):
        found = False
    return f"{module}.{name}" if found else module


@functools.cache
def _function_imports() -> tuple[tuple[str, int, str], ...]:
    """``(path under caliper/, line, module)`` for every import inside a function of core
    (``caliper/testing/`` and imports for type checkers aside)."""
    return tuple(_scan_function_imports())


def _scan_function_imports() -> Iterator[tuple[str, int, str]]:
    for path in _python_files(CALIPER):
        where = path.relative_to(CALIPER).as_posix()
        if where.startswith("testing/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_nodes(tree)
        functions = [
            n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        seen: set[int] = set()
        for function in functions:
            for node in ast.walk(function):
                if id(node) in skip or id(node) in seen:
                    continue
                seen.add(id(node))
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        yield where, node.lineno, alias.name
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    for alias in node.names:
                        yield where, node.lineno, _imported_module(node.module, alias.name)


def _unexplained_imports(allowed: dict[str, str]) -> tuple[list[str], set[str]]:
    """The function-level imports ``allowed`` does not name, and its entries none uses."""
    found, used = [], set()
    for where, line, module in _function_imports():
        key = next((k for k in (f"{where}::{module}", module) if k in allowed), None)
        if key is None:
            found.append(f"caliper/{where}:{line}: imports {module} inside a function")
        else:
            used.add(key)
    return found, set(allowed) - used


def test_imports_are_at_the_module_head_unless_deferred_for_a_reason():
    """An import inside a function is for a module :data:`DEFERRED_IMPORTS` names (the
    start-up it keeps light, the heavy dependency it avoids); any other goes at the head."""
    found, unused = _unexplained_imports(DEFERRED_IMPORTS)
    assert found == []
    assert unused == set(), "deferred nowhere now: take these off DEFERRED_IMPORTS"
    assert all(reason.strip() for reason in DEFERRED_IMPORTS.values())


def test_the_import_rule_names_an_import_left_unexplained():
    allowed = {k: v for k, v in DEFERRED_IMPORTS.items() if k != "caliper.runner.shard"}
    found, unused = _unexplained_imports(allowed)
    assert found and all(
        item.endswith("imports caliper.runner.shard inside a function") for item in found
    )
    assert unused == set()


def _documented_names() -> set[str]:
    page = (ROOT / "docs" / "plugins" / "api.md").read_text(encoding="utf-8")
    return {
        line.split("`")[1].split("(")[0] for line in page.splitlines() if line.startswith("### `")
    }


def test_the_face_is_what_the_api_reference_documents():
    import caliper.plugin as face

    names = {name for _, _, section in face.SECTIONS for name in section}
    assert set(face.__all__) == {"SECTIONS", *names}
    assert len(names) == sum(len(section) for _, _, section in face.SECTIONS)  # no name twice
    for name in sorted(names):
        assert getattr(face, name) is not None, name
    assert names <= _documented_names()


def test_importing_the_face_imports_none_of_its_modules():
    code = (
        "import sys, caliper.plugin\n"
        "print(sorted(m for m in sys.modules if m.startswith('caliper.') and m != 'caliper.plugin'"
        " and not m.startswith('caliper._')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("caliper.process", "caliper.system.process"),
        ("caliper.attempt", "caliper.plugin.attempt"),
        ("caliper.plugins", "caliper.host.plugins"),
        ("caliper.runner.compose", "caliper.runner.run.compose"),
    ],
)
def test_an_old_module_path_is_the_moved_module_and_warns(old, new):
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert any(issubclass(w.category, DeprecationWarning) and new in str(w.message) for w in caught)


def test_every_old_path_leads_somewhere():
    from caliper._relocated import RELOCATED

    for old, new in RELOCATED.items():
        assert importlib.util.find_spec(new) is not None, (old, new)
        assert not (CORE / (old.replace(".", "/") + ".py")).exists(), old
