"""The judge contract (``caliper.judge``) stands below the engine, the backends and plugins."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import caliper

SOURCE_ROOT = Path(caliper.__file__).parent
ABOVE_THE_CONTRACT = {"caliper.engine", "caliper.plugins", "caliper.hookspecs", "caliper.backend"}


def _module_file(name: str) -> Path | None:
    relative = Path(*name.split(".")[1:])
    for candidate in (
        SOURCE_ROOT / relative.with_suffix(".py"),
        SOURCE_ROOT / relative / "__init__.py",
    ):
        if candidate.is_file():
            return candidate
    return None


def _caliper_imports(path: Path) -> set[str]:
    """Every ``caliper.*`` module ``path`` names in an import, type-checking ones included."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.startswith("caliper."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("caliper."))
    return found


def test_the_judge_contract_reaches_no_engine_plugin_or_backend_module() -> None:
    """Follows imports statically (``if TYPE_CHECKING:`` blocks too): no cycle can form."""
    seen: set[str] = set()
    todo = ["caliper.judge"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = _module_file(name)
        if path is not None:
            todo.extend(_caliper_imports(path) - seen)
    assert "caliper.attempt" in seen  # the walk does follow the contract's own imports
    assert seen & ABOVE_THE_CONTRACT == set(), sorted(seen)


def test_importing_the_judge_contract_loads_no_engine_or_plugin_host() -> None:
    code = (
        "import sys, caliper.judge\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('caliper'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(done.stdout.split())
    assert "caliper.judge" in loaded
    assert loaded & ABOVE_THE_CONTRACT == set(), sorted(loaded)
