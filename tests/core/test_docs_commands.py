"""Every ``caliper`` command line in the README and docs/ works as written.

Each line of a shell code block that starts with ``caliper`` (after a ``$`` prompt or
``VAR=value`` prefixes) must name a real command and only flags its ``--help`` lists. Those
that can run offline are run for real: ``--help``/``--version``/``plugins``, and ``validate``
on a spec the same page shows in a YAML block headed ``# <file name>`` (materialized in a
temporary folder, with a stub for each local skill it names). The others are listed in
:data:`EXCLUDED` with the reason they cannot run here.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from functools import cache
from pathlib import Path

import pytest
import yaml

from caliper_fakeagent.harness import CALIPER

ROOT = Path(__file__).resolve().parents[2]
SHELL_BLOCK = re.compile(r"^```(?:bash|sh|console|shell)\n(.*?)^```", re.M | re.S)
YAML_BLOCK = re.compile(r"^```ya?ml\n# (\S+\.ya?ml)[^\n]*\n(.*?)^```", re.M | re.S)

EXCLUDED = {
    "run": "drives an agent CLI: needs its login and the network (the demo and the e2e tests "
    "run it offline against the scripted model server)",
    "tune": "drives an agent CLI to measure activation: needs its login and the network",
    "retry": "re-runs attempts through an agent CLI: needs its login and a saved run",
    "regrade": "asks an LLM judge: needs an agent login and a saved run",
    "report": "needs a saved run (test_results_docs and the report CLI tests cover it)",
    "list": "needs saved runs (test_list_cli covers it)",
    "history": "needs saved runs (test_history covers it)",
    "compare": "needs two saved runs (test_compare_cli covers it)",
    "merge": "needs the shard runs of one run (test_shard_merge_cli covers it)",
    "import": "needs a skill-creator skill folder and its evals files (test_import covers it)",
    "update-cli": "asks npm and PyPI for the newest versions: needs the network",
    "clean": "acts on the leftovers of killed runs of this machine (test_run_ledger covers it)",
    "migrate": "needs the reader's own files of the earlier tool (test_migrate_cli covers it)",
}
"""Commands that cannot run offline as the docs write them, and why. A ``validate`` of a spec
the page does not show (the reader's own file) or that names a skill from a git repository
has only its flags checked."""


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _caliper_words(line: str) -> list[str] | None:
    """The words of a ``caliper …`` command on ``line`` (its first one), or ``None``."""
    line = line.strip()
    if line.startswith("$ "):
        line = line[2:]
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return None
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
        words = words[1:]
    if not words or words[0] != "caliper":
        return None
    for stop in ("|", "&&", "||", ";", ">", "2>&1"):
        if stop in words:
            words = words[: words.index(stop)]
    return words


def doc_commands() -> list[tuple[Path, list[str]]]:
    found = []
    for path in doc_files():
        text = path.read_text(encoding="utf-8")
        for block in SHELL_BLOCK.findall(text):
            for line in block.replace("\\\n", " ").splitlines():
                words = _caliper_words(line)
                if words:
                    found.append((path, words))
        prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
        for span in re.findall(r"`(caliper [^`]+)`", re.sub(r"\s*\n\s*", " ", prose)):
            words = _caliper_words(span.replace("\\|", "|").replace("…", ""))
            if words and not (len(words) > 1 and words[1].isupper()):  # `caliper COMMAND`
                found.append((path, words))
                INLINE.add(id(words))
    return found


INLINE: set[int] = set()
"""The commands found in prose (backticks), not in a code block: only their flags are checked."""
COMMANDS = doc_commands()


def _id(item: tuple[Path, list[str]]) -> str:
    return f"{item[0].relative_to(ROOT)}: {' '.join(item[1])[:70]}"


@cache
def _help(*command: str) -> str:
    done = subprocess.run(
        [str(CALIPER), *command, "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"`caliper {' '.join(command)} --help` failed: {done.stderr}"
    return done.stdout


def _command_path(words: list[str]) -> list[str]:
    """The command (and subcommand) a line runs: ``["import", "skill-creator"]``, ``["run"]``."""
    path = [w for w in words[1:3] if not w.startswith("-")][:1]
    if path == ["import"] and len(words) > 2 and not words[2].startswith("-"):
        path.append(words[2])
    return path


def test_the_docs_have_command_lines():
    assert len(COMMANDS) > 30
    assert {w[1] for _, w in COMMANDS if len(w) > 1} >= {"validate", "run", "compare", "report"}


@pytest.mark.parametrize("item", COMMANDS, ids=_id)
def test_every_documented_command_and_flag_exists(item):
    path, words = item
    command = _command_path(words)
    if not command:
        return  # `caliper --help` / `caliper --version`: run below
    extra = ()
    named = words[words.index("--executor") + 1 :][:1] if "--executor" in words else []
    if named and re.fullmatch(r"[a-z][a-z0-9-]*", named[0]):  # its flags exist once named
        extra = ("--executor", named[0])
    text = _help(*command, *extra)
    for word in words[1 + len(command) :]:
        flag = word.split("=", 1)[0]
        if flag.startswith("--"):
            assert re.search(rf"(^|[\s,]){re.escape(flag)}\b", text, re.M), (
                f"{path.relative_to(ROOT)}: `{' '.join(words)}`: `caliper "
                f"{' '.join(command)}` has no {flag}"
            )


def _specs_shown(path: Path) -> dict[str, str]:
    return dict(YAML_BLOCK.findall(path.read_text(encoding="utf-8")))


def _materialize(spec_text: str, name: str, folder: Path) -> Path | str:
    """Write the spec and a stub for each local skill it names; a reason string when the spec
    cannot be checked offline."""
    data = yaml.safe_load(spec_text) or {}
    folder.mkdir(parents=True, exist_ok=True)
    for skill in data.get("skills") or []:
        if isinstance(skill, dict):
            return "it names a skill from a git repository (fetched over the network)"
        target = (folder / skill).resolve()
        skill_file = target if target.name == "SKILL.md" else target / "SKILL.md"
        skill_file.parent.mkdir(parents=True, exist_ok=True)
        skill_name = skill_file.parent.name if skill_file.parent != folder else "commit-writer"
        skill_file.write_text(
            f"---\nname: {skill_name}\ndescription: A stub of {skill_name} for the docs test.\n"
            "---\nDo the task.\n",
            encoding="utf-8",
        )
    for extra in (data.get("sandbox") or {}).get("extra_path") or []:
        (folder / extra).mkdir(parents=True, exist_ok=True)
    spec = folder / name
    spec.write_text(spec_text, encoding="utf-8")
    return spec


def _runnable() -> list[tuple[Path, list[str]]]:
    """The lines that run offline: help, version, plugins, and validate of specs the page
    shows (a validate of the reader's own file, such as `other.eval.yaml`, only has its
    flags checked)."""
    runnable = []
    for path, words in COMMANDS:
        if id(words) in INLINE:
            continue
        command = _command_path(words)
        if command == ["validate"]:
            files = [w for w in words[2:] if not w.startswith("-")]
            shown = _specs_shown(path)
            if not all(f in shown or (ROOT / f).exists() for f in files):
                continue
        elif command and command[0] != "plugins":
            continue
        runnable.append((path, words))
    return runnable


@pytest.mark.parametrize("item", _runnable(), ids=_id)
def test_offline_commands_run_as_written(item, tmp_path):
    path, words = item
    cwd = tmp_path / "project" / "skills" / "commit-writer"
    cwd.mkdir(parents=True)
    if _command_path(words) == ["validate"]:
        shown = _specs_shown(path)
        for name in [w for w in words[2:] if not w.startswith("-")]:
            if name in shown:
                made = _materialize(shown[name], name, cwd)
                if isinstance(made, str):
                    pytest.skip(f"{name}: {made}")
    done = subprocess.run(
        [str(CALIPER), *words[1:]], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    out = done.stdout + done.stderr
    assert "Traceback" not in out and "No such option" not in out, out
    expected = {0, 1} if "--probe" in words else {0}  # --probe exits 1 when a check is weak
    assert done.returncode in expected, f"`{' '.join(words)}` exited {done.returncode}:\n{out}"


def test_every_command_line_is_run_or_excluded_with_a_reason():
    kinds = {(_command_path(w) or ["--help"])[0] for _, w in COMMANDS}
    unaccounted = kinds - set(EXCLUDED) - {"validate", "plugins", "--help", "--version"}
    assert not unaccounted, f"doc commands neither run nor excluded: {sorted(unaccounted)}"
