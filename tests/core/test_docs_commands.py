"""Every ``caliper`` command line in the README and docs/ works as written.

Each line of a shell code block that starts with ``caliper`` (after a ``$`` prompt or
``VAR=value`` prefixes) must name a real command and only flags its ``--help`` lists. Every
line that can run offline is run for real, in a project built once per session: the README's
``commit-writer.eval.yaml`` (with a stub for each local skill it names) and copies of it under
the names the other pages give the reader's own spec, runs of it saved offline through the
test-only ``fake`` backend (a full run, an ``--ablate`` control run, and the four shard runs of
a ``demo`` run as a CI merge job downloads them); the migration page runs in a copy of a
project of the earlier tool, the tuning page in a project with the probe files it shows and a
skill-creator skill folder to import. Placeholders (``SPEC``, ``RUN``, ``<control-run.json>``,
…) are replaced with real values; a ``run`` or ``tune`` line that names no ``--model`` gets
``--model fake``, the one change made to a line. Each must exit with a code the docs give it
and print no traceback. The lines that cannot run offline are listed, by reason, in
:data:`EXCLUDED` and :func:`_not_run`.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from functools import cache
from pathlib import Path

import attrs
import pytest
import yaml

from caliper_fakeagent.harness import CALIPER, Workspace

ROOT = Path(__file__).resolve().parents[2]
SHELL_BLOCK = re.compile(r"^```(?:bash|sh|console|shell)\n(.*?)^```", re.M | re.S)
YAML_BLOCK = re.compile(r"^```ya?ml\n# (\S+\.ya?ml)[^\n]*\n(.*?)^```", re.M | re.S)

EXCLUDED = {
    "update-cli": "asks npm and PyPI for the newest versions: needs the network",
    "retry": "named only in prose, with placeholders (its flags are checked); it re-runs "
    "attempts of a failed run, which test_run_retry covers",
    "regrade": "named only in prose (its flags are checked); it asks an LLM judge again, "
    "which test_regrade covers",
    "review": "named only in prose, with a placeholder OVERRIDES file (its flags are checked); "
    "tests/report_html/test_review.py runs it",
}
"""Commands none of whose lines run offline as the docs write them, and why. Lines of other
commands that cannot run are named by :func:`_not_run`."""


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
            lines = block.replace("\\\n", " ").splitlines()
            if any(line.startswith("$ ") for line in lines):  # a session: the rest is output
                lines = [line for line in lines if line.startswith("$ ")]
            for line in lines:
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


README = ROOT / "README.md"
MIGRATION = ROOT / "docs" / "migration.md"
PREDECESSOR = ROOT / "tests" / "core" / "predecessor" / "project"
SPEC_NAME = "commit-writer.eval.yaml"
READER_SPECS = ("my-skill.eval.yaml", "other.eval.yaml", "demo.eval.yaml")
"""The names the pages give the reader's own spec: copies of the README's spec (``my-skill``
also has the task ``writes the changelog`` that docs/ci.md sets a bar on)."""
CHANGELOG_TASK = """
  - name: writes the changelog
    prompt: Write CHANGELOG.md for the last release.
    assert: |
      import pathlib
      assert pathlib.Path("CHANGELOG.md").is_file()
    activates: [changelog-writer]
"""
BAR_FLAGS = (
    "--min-score",
    "--min-activation",
    "--max-cost-per-attempt",
    "--max-duration",
    "--require-improvement",
    "--min-lift",
)
RUN_KINDS = {
    "run",
    "report",
    "list",
    "history",
    "compare",
    "merge",
    "migrate",
    "validate",
    "clean",
    "tune",
    "import",
}
TUNING = ROOT / "docs" / "tuning.md"
TUNE_SPEC = """skills:
  - ./skills/invoice-totals
  - ../changelog-writer
tasks:
  - name: totals an invoice
    prompt: Add up the invoice in bills.csv and tell me the total.
    activates: [invoice-totals]
  - name: release notes go to the neighbour
    prompt: What changed since v2.1? I need release notes.
    activates: [changelog-writer]
"""
"""A stand-in for the reader's ``invoice-totals.eval.yaml``, read by ``tune`` as a probe set."""
DOCUMENTED_FAILURES = {"bad.probes.yaml": 2}
"""Files whose lines the docs show failing, and the exit code they show (a malformed probe
file exits 2 before anything runs)."""


@attrs.frozen
class Project:
    """The session's project: the spec folder, its environment and the runs saved in it."""

    space: Workspace
    folder: Path
    full: Path
    control: Path

    def caliper(self, words: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(CALIPER), *words],
            cwd=cwd or self.folder,
            env=self.space.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )

    def save_run(self, *args: str) -> Path:
        """Run ``caliper run ARGS --model fake`` and return the results file it saved."""
        before = set(self.folder.glob(".caliper/results/*/*.json"))
        done = self.caliper(["run", *args, "--model", "fake"])
        assert done.returncode == 0, done.stdout + done.stderr
        (made,) = set(self.folder.glob(".caliper/results/*/*.json")) - before
        return made


@pytest.fixture(scope="session")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The README's spec with stub skills, the reader's specs, a full run and its control run,
    and the four shard runs of ``demo`` under ``shard-*/demo/`` as CI artifacts."""
    space = Workspace.create(tmp_path_factory.mktemp("docs-project"))
    folder = space.root / "skills" / "commit-writer"
    text = _specs_shown(README)[SPEC_NAME]
    made = _materialize(text, SPEC_NAME, folder)
    assert isinstance(made, Path), made
    for name in READER_SPECS:
        extra = CHANGELOG_TASK if name == "my-skill.eval.yaml" else ""
        (folder / name).write_text(text.rstrip("\n") + "\n" + extra, encoding="utf-8")
    stub = Project(space, folder, folder, folder)
    full = stub.save_run(SPEC_NAME, "--k", "2")
    control = stub.save_run(SPEC_NAME, "--k", "2", "--ablate", "commit-writer")
    for shard in range(1, 5):
        saved = stub.save_run("demo.eval.yaml", "--k", "2", "--shard", f"{shard}/4")
        target = folder / f"shard-{shard}" / "demo"
        target.mkdir(parents=True)
        saved.rename(target / saved.name)
    return Project(space, folder, full, control)


def _not_run(path: Path, words: list[str]) -> str | None:
    """Why the line cannot run offline as written, or ``None`` when it is run."""
    if id(words) in INLINE and words != ["caliper", "clean"]:  # a whole command: it is run
        return "a command named in prose, often with placeholders: only its flags are checked"
    command = _command_path(words)
    if not command or command[0] == "plugins":
        return None
    if command[0] in EXCLUDED:
        return EXCLUDED[command[0]]
    if command[0] not in RUN_KINDS:
        return f"no offline run is set up for `caliper {command[0]}`"
    if "--executor" in words:
        return "runs on a Ray cluster (`--executor ray` needs one at --ray-address)"
    named = words[words.index("--model") + 1 :][:1] if "--model" in words else []
    if named and named[0] != "fake":
        return f"--model {named[0]} names a real agent: needs its login and the network"
    if command == ["validate"]:
        shown = _specs_shown(path)
        for name in _operands(words):
            if path == TUNING and name == "pdf.eval.yaml":
                continue  # the spec `caliper import` writes, made before the line runs
            if name not in shown and name not in READER_SPECS and not (ROOT / name).exists():
                return f"{name} is the reader's own file or one `caliper import` writes"
            skills = (yaml.safe_load(shown.get(name, "")) or {}).get("skills") or []
            if any(isinstance(skill, dict) for skill in skills):
                return f"{name} names a skill from a git repository (fetched over the network)"
    return None


def _operands(words: list[str]) -> list[str]:
    return [w for w in words[2:] if not w.startswith("-")]


def _runnable() -> list[tuple[Path, list[str]]]:
    return [item for item in COMMANDS if _not_run(*item) is None]


def _substitute(words: list[str], project: Project, cwd: Path) -> list[str]:
    """The line with its placeholders replaced by real values and globs expanded."""
    values = {
        "<control-run.json>": str(project.control),
        "<full-run.json>": str(project.full),
        "<run>": str(project.full),
        "RUN": str(project.full),
        "RUN_ID": project.full.stem,
        "SPEC": "demo.eval.yaml",
    }
    out: list[str] = []
    for word in words[1:]:
        word = values.get(word, word)
        if "*" in word:
            matches = sorted(str(p.relative_to(cwd)) for p in cwd.glob(word))
            assert matches, f"{word} matches nothing in {cwd}"
            out += matches
        else:
            out.append(word)
    if _command_path(words)[:1] in (["run"], ["tune"]) and "--model" not in words:
        out += ["--model", "fake"]
    return out


def _migration_project(folder: Path) -> Path:
    """A copy of a project of the earlier tool, its spec also as ``my-skill.eval.yaml`` and
    the whole project again under ``evals/``."""
    shutil.copytree(PREDECESSOR, folder)
    shutil.copy(folder / SPEC_NAME, folder / "my-skill.eval.yaml")
    shutil.copytree(PREDECESSOR, folder / "evals")
    return folder


def _validate_folder(path: Path, words: list[str], project: Project, tmp: Path) -> Path:
    """A copy of the project's skills and specs, with the specs the page shows written over
    them (so each page validates its own spec)."""
    skills = tmp / "skills"
    shutil.copytree(
        project.folder.parent, skills, ignore=shutil.ignore_patterns(".caliper", "shard-*")
    )
    cwd = skills / "commit-writer"
    shown = _specs_shown(path)
    for name in _operands(words):
        if name in shown:
            made = _materialize(shown[name], name, cwd)
            assert isinstance(made, Path), made
    return cwd


def _files_shown(path: Path) -> dict[str, str]:
    """The files a page shows: YAML blocks headed ``# <name>`` and ``$ cat <name>`` output."""
    shown = _specs_shown(path)
    for block in SHELL_BLOCK.findall(path.read_text(encoding="utf-8")):
        for name, body in re.findall(r"^\$ cat (\S+)\n(.*?)(?=^\$ |\Z)", block, re.M | re.S):
            shown[name] = body
    return shown


def _tune_project(folder: Path) -> Path:
    """The tuning page's project: the skill, its neighbour beside the project (where the probe
    file's ``../changelog-writer`` points), the probe files the page shows, and a spec."""
    for skill in (folder / "proj" / "skills" / "invoice-totals", folder / "changelog-writer"):
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            f"---\nname: {skill.name}\ndescription: A stub of {skill.name}.\n---\nDo it.\n",
            encoding="utf-8",
        )
    cwd = folder / "proj"
    for name, text in _files_shown(TUNING).items():
        if name.endswith(".probes.yaml"):
            (cwd / name).write_text(text, encoding="utf-8")
    (cwd / "invoice-totals.eval.yaml").write_text(TUNE_SPEC, encoding="utf-8")
    return cwd


EVALS_JSON = {
    "skill_name": "pdf",
    "evals": [
        {
            "id": 1,
            "prompt": "Fill in form.pdf with my name, Ada.",
            "expected_output": "A filled form",
            "expectations": ["The output PDF has Ada in the name field"],
            "files": ["evals/files/form.pdf"],
        },
        {"id": 2, "prompt": "Merge a.pdf and b.pdf."},
    ],
}
"""A stand-in for skill-creator's ``evals/evals.json`` of the reader's ``skills/pdf``."""


def _import_project(folder: Path) -> Path:
    """The import section's project: ``skills/pdf`` with its ``evals/evals.json`` and a file
    it names, and the trigger-eval JSON the page shows as ``trigger-eval.json`` and
    ``trig.json``."""
    evals = folder / "skills" / "pdf" / "evals"
    (evals / "files").mkdir(parents=True)
    (evals / "files" / "form.pdf").write_bytes(b"%PDF-1.4\n")
    (evals / "evals.json").write_text(json.dumps(EVALS_JSON), encoding="utf-8")
    (folder / "skills" / "pdf" / "SKILL.md").write_text(
        "---\nname: pdf\ndescription: Fills and merges PDF files.\n---\nDo it.\n",
        encoding="utf-8",
    )
    (trigger,) = re.findall(
        r"^```json\n(\[.*?)^```", TUNING.read_text(encoding="utf-8"), re.M | re.S
    )
    for name in ("trigger-eval.json", "trig.json"):
        (folder / name).write_text(trigger, encoding="utf-8")
    return folder


def _expected_codes(words: list[str]) -> set[int]:
    """The exit codes docs/exit-codes.md gives the line with the fake agent's results."""
    for name, code in DOCUMENTED_FAILURES.items():
        if name in words:
            return {code}
    if "--probe" in words:
        return {0, 1}  # 1 when a check passes with no agent at all
    if any(w.split("=", 1)[0] in BAR_FLAGS for w in words):
        return {0, 3}  # 3 when a bar (or a baseline's lift gate) is not met: the fake agent
        # passes nothing here
    return {0}


@pytest.mark.parametrize("item", _runnable(), ids=_id)
def test_offline_commands_run_as_written(item, project, tmp_path):
    path, words = item
    command = _command_path(words)
    cwd = project.folder
    if path == MIGRATION or command == ["migrate"]:
        cwd = _migration_project(tmp_path / "project")
        if command == ["validate"]:  # the page validates the spec it has just migrated
            for name in _operands(words):
                done = project.caliper(["migrate", name], cwd=cwd)
                assert done.returncode == 0, done.stdout + done.stderr
    elif path == TUNING and command[0] in ("import", "validate"):
        cwd = _import_project(tmp_path)
        if command == ["validate"]:  # the page validates the spec it has just imported
            done = project.caliper(["import", "skill-creator", "skills/pdf"], cwd=cwd)
            assert done.returncode == 0, done.stdout + done.stderr
    elif command == ["validate"]:
        cwd = _validate_folder(path, words, project, tmp_path)
    elif command == ["tune"]:
        cwd = _tune_project(tmp_path)
        probes = words[words.index("--probes") + 1]
        assert (cwd / probes).is_file(), f"{probes}: the page shows no such probe file"
    argv = _substitute(words, project, cwd)
    done = project.caliper(argv, cwd=cwd)
    out = done.stdout + done.stderr
    assert "Traceback" not in out and "No such option" not in out, out
    assert done.returncode in _expected_codes(words), (
        f"`caliper {' '.join(argv)}` exited {done.returncode}:\n{out}"
    )


def test_the_lines_that_run_cover_every_offline_command():
    """Lines of each offline command are run, not only checked."""
    run = {(_command_path(w) or ["--help"])[0] for _, w in _runnable()}
    assert run >= RUN_KINDS


def test_every_command_line_is_run_or_excluded_with_a_reason():
    kinds = {(_command_path(w) or ["--help"])[0] for _, w in COMMANDS}
    unaccounted = kinds - set(EXCLUDED) - RUN_KINDS - {"plugins", "--help", "--version"}
    assert not unaccounted, f"doc commands neither run nor excluded: {sorted(unaccounted)}"
    ran = {(_command_path(w) or ["--help"])[0] for _, w in _runnable()}
    assert not ran & set(EXCLUDED), f"excluded but run: {sorted(ran & set(EXCLUDED))}"
