"""Every install command in the docs, and every install hint Caliper prints, gets this project.

PyPI's ``caliper-eval`` (up to 0.21.0) is a different, older project, and the other names are
not there yet, so an install line that names one of our distributions must pin it to our version
(``==<version>``) and take it from a folder of our wheels (``--find-links``), unless its text
says it is for once Caliper is published.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

import caliper
from caliper.host import install_hints
from caliper.host.catalogue import KNOWN_DISTRIBUTIONS, install_command
from caliper.host.install_hints import OUR_DISTRIBUTIONS, InstallSource, add_distribution

ROOT = Path(__file__).resolve().parents[2]
VERSION = caliper.__version__
INSTALL = re.compile(r"\b(pip3? install|pipx install|pipx inject|uv tool install|uv pip install)\b")
PUBLISHED = re.compile(r"\bonce\b.{0,40}\bpublished|once this version is on PyPI", re.I)


def doc_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    files += sorted((ROOT / "examples").rglob("*.md")) + sorted((ROOT / "skills").rglob("*.md"))
    files += sorted(ROOT.glob("caliper-*/README.md"))
    return [f for f in files if ".venv" not in f.parts]


def _requirement_name(token: str) -> str | None:
    """The distribution a requirement token names, or ``None`` for paths, URLs and options."""
    if token.startswith("-") or "/" in token or token.startswith("."):
        return None
    match = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)", token)
    return match.group(1).lower().replace("_", "-") if match else None


def _install_args_start(words: list[str]) -> int | None:
    """Where the arguments of the first install command in ``words`` start."""
    for i, word in enumerate(words):
        tool = word.rsplit("/", 1)[-1]
        after = words[i + 1 : i + 3]
        if tool in ("pip", "pip3", "pipx") and after[:1] in (["install"], ["inject"]):
            return i + 2
        if tool == "uv" and after in (["tool", "install"], ["pip", "install"]):
            return i + 3
    return None


def problems_of(command: str) -> list[str]:
    """Why ``command`` (one shell command) could install something that is not this project."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    start = _install_args_start(words)
    if start is None:
        return []
    verb = words[start - 2 : start]
    args = []
    for word in words[start:]:
        if word in ("&&", "||", ";", "|"):
            break
        args.append(word)
    has_find_links = any(
        "--find-links" in a or a == "-f" or (a.startswith("--pip-args") and "-f" in a) for a in args
    )
    positional = [a for a in args if not a.startswith("-")]
    if verb[-1] == "inject" and positional:
        positional = positional[1:]  # the venv to inject into, not a requirement
    problems = []
    for token in positional:
        name = _requirement_name(token)
        if name not in OUR_DISTRIBUTIONS:
            continue
        if f"=={VERSION}" not in token:
            problems.append(f"{token!r} is not pinned to =={VERSION}")
        if not has_find_links:
            problems.append(f"{token!r} is not taken from a wheel folder (--find-links)")
    return problems


def _commands_in(text: str) -> list[tuple[int, str, str]]:
    """(line number, command, context) for each install command in a Markdown file.

    The context is the command's line and, for a line inside a code block, the paragraph just
    before the block: where a doc says the lines are for once Caliper is published.
    """
    found = []
    lines = text.splitlines()
    in_block, before, paragraph, last = False, "", [], []
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            in_block = not in_block
            before = " ".join((paragraph or last)[-4:]) if in_block else ""
            paragraph, last = [], []
            continue
        if in_block:
            if INSTALL.search(line):
                found.append((number, line, before + " " + line))
            continue
        if line.strip():
            paragraph.append(line)
        elif paragraph:
            paragraph, last = [], paragraph
        for inline in re.findall(r"`([^`]+)`", line):
            if INSTALL.search(inline):
                found.append((number, inline, line))
    # Inline commands broken over two lines: join each paragraph and look again.
    joined = re.sub(r"\n(?!\n)", " ", re.sub(r"```.*?```", "", text, flags=re.S))
    for inline in re.findall(r"`([^`\n]+)`", joined):
        if INSTALL.search(inline) and not any(inline == c for _, c, _ in found):
            found.append(
                (0, inline, joined[max(0, joined.find(inline) - 300) : joined.find(inline)])
            )
    return found


def bad_install_lines(files: list[Path]) -> list[str]:
    bad = []
    for path in files:
        for number, command, context in _commands_in(path.read_text(encoding="utf-8")):
            problems = problems_of(command)
            if problems and not PUBLISHED.search(context):
                where = (
                    f"{path.relative_to(ROOT)}:{number}" if number else str(path.relative_to(ROOT))
                )
                bad.append(f"{where}: {command.strip()}: {'; '.join(problems)}")
    return bad


def test_the_checker_catches_the_lines_that_install_the_predecessor(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text(
        "Install it:\n\n```bash\npipx install caliper-eval\n```\n\n"
        "Or `pipx install 'caliper-eval[ray]'`, or `pipx inject caliper-eval caliper-backend-pi`,\n"
        f"or `pip install --find-links dist 'caliper-core[testing]'`, or `uv tool install\n"
        f"caliper-eval=={VERSION}`.\n\n"
        f'Fine: `pipx install --pip-args="--find-links dist" '
        f"'caliper-eval[codex]=={VERSION}'`,\n"
        f"`pipx inject --pip-args='--find-links dist' caliper-eval "
        f"caliper-backend-pi=={VERSION}`,\n"
        "`pip install 'hermes-agent[mcp]'`, `pip install -e ./caliper-core`.\n\n"
        "Once Caliper is published to PyPI:\n\n```bash\npipx install 'caliper-eval[codex]'\n```\n",
        encoding="utf-8",
    )
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        bad = bad_install_lines([doc])
    finally:
        ROOT = saved
    assert len(bad) == 5, bad
    assert "doc.md:4: pipx install caliper-eval" in bad[0]
    assert any("caliper-backend-pi" in b for b in bad)
    assert any("caliper-core[testing]" in b and "not pinned" in b for b in bad)
    assert any("uv tool install" in b and "--find-links" in b for b in bad)


def test_no_doc_names_an_install_command_that_gets_another_project():
    bad = bad_install_lines(doc_files())
    assert not bad, "install lines that do not get this project:\n" + "\n".join(bad)


SOURCES = [
    InstallSource("pip", VERSION, "/home/u/caliper/bin/python"),
    InstallSource("pip", VERSION, "/home/u/caliper/bin/python", "/home/u/src/caliper/dist"),
    InstallSource("uv-tool", VERSION, "/home/u/.local/share/uv/tools/caliper-eval/bin/python"),
    InstallSource("pipx", VERSION, "/p/bin/python", None, pipx_venv="caliper-eval"),
    InstallSource("pipx", VERSION, "/p/bin/python", "/home/u/my wheels", pipx_venv="caliper-eval"),
]


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: f"{s.kind}-{bool(s.wheel_folder)}")
@pytest.mark.parametrize("plugin_id", sorted(KNOWN_DISTRIBUTIONS))
def test_every_install_hint_pins_our_version_and_a_wheel_folder(monkeypatch, source, plugin_id):
    monkeypatch.setattr(install_hints, "detect", lambda: source)
    hint = install_command(plugin_id)
    command = hint.split(" (")[0]
    assert problems_of(command) == [], hint
    assert KNOWN_DISTRIBUTIONS[plugin_id][0] in command
    if source.wheel_folder:
        assert shlex.quote(source.wheel_folder) in command or source.wheel_folder in command
    if source.kind == "pipx":
        assert command.startswith("pipx inject ")
    else:
        assert command.startswith(shlex.quote(source.python) + " -m pip install") or (
            command.startswith("uv pip install --python ")
        )


def test_a_pipx_hint_with_a_folder_survives_pipxs_own_splitting():
    source = SOURCES[-1]
    words = shlex.split(add_distribution("caliper-backend-hermes", source))
    pip_args = next(w for w in words if w.startswith("--pip-args="))
    assert shlex.split(pip_args.split("=", 1)[1]) == ["--find-links", "/home/u/my wheels"]


def _pipx_prefix(tmp_path: Path, pip_args: list[str]) -> Path:
    prefix = tmp_path / "venvs" / "caliper-eval"
    prefix.mkdir(parents=True)
    metadata = {"main_package": {"package": "caliper-eval", "pip_args": pip_args}}
    (prefix / "pipx_metadata.json").write_text(json.dumps(metadata), encoding="utf-8")
    return prefix


def test_detect_reads_the_wheel_folder_pipx_recorded(tmp_path, monkeypatch):
    monkeypatch.setattr(install_hints, "_direct_url", lambda name: None)
    prefix = _pipx_prefix(tmp_path, ["--find-links", "/srv/wheels"])
    found = install_hints.detect(str(prefix), "/x/python")
    assert found.kind == "pipx" and found.version == VERSION
    assert (found.wheel_folder, found.pipx_venv) == ("/srv/wheels", "caliper-eval")
    hint = add_distribution("caliper-backend-hermes", found)
    assert hint == (
        f"pipx inject --pip-args='--find-links /srv/wheels' caliper-eval "
        f"caliper-backend-hermes=={VERSION}"
    )


def test_detect_reads_the_folder_of_a_wheel_installed_by_path(tmp_path, monkeypatch):
    wheel = f"file:///srv/dist/caliper_eval-{VERSION}-py3-none-any.whl"
    monkeypatch.setattr(
        install_hints,
        "_direct_url",
        lambda name: {"url": wheel, "archive_info": {}} if name == "caliper-eval" else None,
    )
    found = install_hints.detect(str(tmp_path), "/v/bin/python")
    assert (found.kind, found.wheel_folder) == ("pip", "/srv/dist")
    assert add_distribution("caliper-judge-llm", found) == (
        f"/v/bin/python -m pip install --find-links /srv/dist caliper-judge-llm=={VERSION}"
    )


def test_this_checkout_is_detected_as_a_development_install():
    found = install_hints.detect()
    assert found.kind == "checkout" and found.checkout == str(ROOT)
    assert "scripts/setup" in install_command("hermes")
