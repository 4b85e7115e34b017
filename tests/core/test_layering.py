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
* no function over 80 lines, click command bodies aside.
"""

from __future__ import annotations

import ast
import importlib
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
