"""Walking, hashing and copying a skill folder safely: the one mechanism every installer uses.

A skill folder is copied with what an agent needs (its ``SKILL.md`` and the files beside it)
and nothing that could hurt the machine or leak outside it:

* links are followed only while they stay inside the skill folder; a link that leaves it, a
  dangling link and a link back to a folder above itself (a loop) are left out and reported;
* FIFOs, sockets and device files are left out (copying a FIFO would block forever);
* the total size is capped (``CALIPER_SKILL_MAX_BYTES``, default 100 MiB): a bigger folder is
  refused with a message naming it, instead of filling the disk;
* version-control folders, caliper's own results and eval specs are left out (a skill that
  sits beside its spec must not carry the spec or past results into the agent's reach).

:func:`scan` lists exactly what :func:`copy_tree` copies and :func:`content_hash` digests, so
the saved hash describes the files the agent saw.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat
from pathlib import Path

import attrs

SKILL_FILE = "SKILL.md"
IGNORED_NAMES = (".git", ".caliper", "*.eval.yaml", "*.eval.yml", "__pycache__")
"""Entries (files or folders, at any depth) never copied or hashed."""
MAX_BYTES_VARIABLE = "CALIPER_SKILL_MAX_BYTES"
DEFAULT_MAX_BYTES = 100 * 1024 * 1024
MAX_ENTRIES = 100_000
"""Files and folders one skill may hold (links inside the folder can multiply them)."""
_SIZE = r"^\s*(\d+)\s*([kmg]i?b?)?\s*$"
"""A size such as ``500M`` or ``2 GiB`` (case ignored; compiled on first use, by ``re``)."""
_UNITS = {"k": 1024, "m": 1024**2, "g": 1024**3}
_CHUNK = 1024 * 1024


class SkillUnusable(Exception):
    """The skill folder cannot be installed (raised by :func:`copy_tree`): over the size cap,
    a link that leaves its source, or a ``SKILL.md`` that would not be copied."""


class SkillTooLarge(SkillUnusable):
    """The skill folder holds more than the size cap allows (raised by :func:`copy_tree`)."""


@attrs.frozen
class TreeIssue:
    """Something in a skill folder that is left out (or, when ``fatal``, stops its use).

    ``path`` is where it sits in the source folder; ``message`` says what it is and what to
    do about it.
    """

    path: Path
    kind: str  # "outside", "dangling", "loop", "special", "unreadable", "too_large"
    message: str
    fatal: bool = False


@attrs.frozen
class TreeFile:
    """One file to copy: its path relative to the skill folder, where to read it, its size and
    permission bits when scanned."""

    relative: str
    source: Path
    size: int
    mode: int = 0o644


@attrs.frozen
class SkillTree:
    """What a skill folder holds once the rules above are applied."""

    root: Path
    dirs: tuple[str, ...]
    files: tuple[TreeFile, ...]
    issues: tuple[TreeIssue, ...]
    total_bytes: int

    @property
    def fatal(self) -> TreeIssue | None:
        """The issue that makes the folder unusable, if any."""
        return next((issue for issue in self.issues if issue.fatal), None)

    def fatal_text(self) -> str | None:
        """``the skill folder … <why it is unusable>``, or ``None`` when it is usable."""
        fatal = self.fatal
        if fatal is None:
            return None
        if fatal.path == self.root:
            return f"the skill folder {self.root} {fatal.message}"
        return f"the skill folder {self.root} cannot be installed: {fatal.path} {fatal.message}"

    @property
    def nested_skill_files(self) -> tuple[str, ...]:
        """Relative paths of ``SKILL.md`` files below the top one (sub-skills)."""
        return tuple(
            f.relative for f in self.files if f.relative != SKILL_FILE and _is_skill_file(f)
        )


def _is_skill_file(entry: TreeFile) -> bool:
    return entry.relative.rsplit("/", 1)[-1] == SKILL_FILE


def max_skill_bytes(environ: os._Environ[str] | dict[str, str] | None = None) -> int:
    """The size cap: ``$CALIPER_SKILL_MAX_BYTES`` (bytes, or with K/M/G), else 100 MiB.

    An unreadable value raises :class:`ValueError` with a message saying what is accepted.
    """
    env = os.environ if environ is None else environ
    raw = env.get(MAX_BYTES_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_MAX_BYTES
    match = re.match(_SIZE, raw, re.IGNORECASE)
    if not match:
        raise ValueError(
            f"{MAX_BYTES_VARIABLE}={raw!r} is not a size; write a number of bytes, or one "
            "with K, M or G (e.g. 200M)"
        )
    unit = (match.group(2) or "")[:1].lower()
    return int(match.group(1)) * _UNITS.get(unit, 1)


def _ignored(name: str) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in IGNORED_NAMES)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root + os.sep)


def _size_text(count: int) -> str:
    return f"{count / 1024 / 1024:.1f} MiB" if count >= 1024 * 1024 else f"{count} bytes"


def source_root_for(folder: Path, spec_dir: Path | None = None) -> Path:
    """The folder tree a local skill's links may reach: the git work tree holding ``folder``
    (the nearest folder above it with a ``.git``), else ``spec_dir`` when ``folder`` lies in
    it, else ``folder`` itself. Paths are taken as written (not resolved)."""
    here = os.path.abspath(folder)
    top = _work_tree_of(here)
    if top is not None:
        return Path(top)
    if spec_dir is not None:
        spec = os.path.abspath(spec_dir)
        if _inside(here, spec):
            return Path(spec)
    return Path(here)


@functools.lru_cache(maxsize=256)
def real_root(path: str) -> str:
    """``os.path.realpath`` of a source root (many skills share one)."""
    return os.path.realpath(path)


@functools.lru_cache(maxsize=4096)
def _work_tree_of(folder: str) -> str | None:
    if os.path.lexists(os.path.join(folder, ".git")):
        return folder
    parent = os.path.dirname(folder)
    return None if parent == folder else _work_tree_of(parent)


def scan(
    folder: Path,
    *,
    max_bytes: int | None = None,
    source_root: Path | None = None,
    spec_dir: Path | None = None,
) -> SkillTree:
    """List what copying ``folder`` would copy, and every entry left out and why.

    ``source_root`` is the tree links may point into (a git checkout, or by default
    :func:`source_root_for`); a link that resolves outside it and outside the folder is a
    fatal ``outside`` issue naming the link. Ignore files and caliper's outputs are left out
    (:mod:`caliper.system.skill_ignore`). A folder whose ``SKILL.md`` would not be copied is a fatal
    ``no_skill_file`` issue. Never raises for the folder's content; an unreadable folder is an
    issue. Scanning stops at the size cap or the first fatal issue.
    """
    from caliper.system import skill_ignore

    limit = max_skill_bytes() if max_bytes is None else max_bytes
    root = Path(folder)
    if source_root is None:
        source_root = source_root_for(root, spec_dir)
    root_real = os.path.realpath(root)
    source_real = real_root(str(source_root))
    dirs: list[str] = []
    files: list[TreeFile] = []
    issues: list[TreeIssue] = []
    total = 0

    def done() -> SkillTree:
        return SkillTree(root, tuple(dirs), tuple(files), tuple(issues), total)

    top = skill_ignore.matcher_for(str(root), str(source_root))
    # (folder as reached, its relative path, real paths of it and its ancestors, ignore rules)
    stack: list[tuple[Path, str, frozenset[str], skill_ignore.Matcher]] = [
        (root, "", frozenset({root_real}), top)
    ]
    while stack:
        current, relative, ancestors, rules = stack.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name, reverse=True)
        except OSError as exc:
            issues.append(
                TreeIssue(current, "unreadable", f"cannot be read ({exc.strerror}); left out")
            )
            continue
        if any(e.name in skill_ignore.IGNORE_FILES for e in entries):
            rules = rules.added(skill_ignore.read_rules(str(current)))
        for entry in entries:
            name = entry.name
            if _ignored(name) or name in skill_ignore.NEVER_INSTALLED:
                continue
            path = Path(entry.path)
            rel = f"{relative}/{name}" if relative else name
            if entry.is_symlink():
                real = os.path.realpath(path)
                target = os.readlink(path)
                if not os.path.exists(path):
                    issues.append(
                        TreeIssue(
                            path,
                            "dangling",
                            f"is a link to {target}, which does not exist; it is left out "
                            "(remove the link or restore its target)",
                        )
                    )
                    continue
                if not _inside(real, root_real) and not _inside(real, source_real):
                    issues.append(
                        TreeIssue(
                            path,
                            "outside",
                            f"is a link to {target}, which leaves {source_root} (the tree the "
                            "skill comes from); a skill with such a link is refused. Copy what "
                            "it points to into the skill folder instead of linking it",
                            fatal=True,
                        )
                    )
                    return done()
            try:
                info = os.stat(path)
            except OSError as exc:
                issues.append(
                    TreeIssue(path, "unreadable", f"cannot be read ({exc.strerror}); left out")
                )
                continue
            is_dir = stat.S_ISDIR(info.st_mode)
            if rules.layers and rules.ignored(name, is_dir):
                continue
            if len(dirs) + len(files) >= MAX_ENTRIES:
                issues.append(
                    TreeIssue(
                        root,
                        "too_large",
                        f"holds more than {MAX_ENTRIES} files and folders (reached at {rel}); "
                        "a skill this big is refused. Remove files, or links that repeat "
                        "folders, from the skill folder",
                        fatal=True,
                    )
                )
                return done()
            if is_dir:
                real = os.path.realpath(path)
                if real in ancestors:
                    issues.append(
                        TreeIssue(
                            path,
                            "loop",
                            f"is a link back to {os.readlink(path)}, a folder it sits in (a "
                            "loop); it is left out (remove the link)",
                        )
                    )
                    continue
                dirs.append(rel)
                stack.append((path, rel, ancestors | {real}, rules.enter(name)))
            elif stat.S_ISREG(info.st_mode):
                output = skill_ignore.caliper_output(entry.path, name, top=not relative)
                if output is not None:
                    issues.append(
                        TreeIssue(path, "output", f"is {output}; it is not part of the skill")
                    )
                    continue
                total += info.st_size
                if total > limit:
                    issues.append(
                        TreeIssue(
                            root,
                            "too_large",
                            f"holds more than {_size_text(limit)} (reached at {rel}); a skill "
                            f"this big is refused. Remove large files from the skill folder, "
                            f"or raise the limit with {MAX_BYTES_VARIABLE} (e.g. 500M)",
                            fatal=True,
                        )
                    )
                    return done()
                files.append(TreeFile(rel, path, info.st_size, stat.S_IMODE(info.st_mode)))
                if skill_ignore.looks_like_output(name):
                    issues.append(
                        TreeIssue(
                            path,
                            "output_like",
                            "looks like something a command wrote (a log or a report), not "
                            "part of the skill; it is installed. List it in .caliperignore "
                            "(or .gitignore) to leave it out",
                        )
                    )
            else:
                issues.append(
                    TreeIssue(
                        path,
                        "special",
                        "is not a regular file or folder (a FIFO, socket or device); left out",
                    )
                )
    files.sort(key=lambda f: f.relative)
    if not any(f.relative == SKILL_FILE for f in files):
        issues.append(
            TreeIssue(
                root / SKILL_FILE,
                "no_skill_file",
                f"would not be installed: {_why_left_out(issues, root / SKILL_FILE)}",
                fatal=True,
            )
        )
    return SkillTree(root, tuple(sorted(dirs)), tuple(files), tuple(issues), total)


def _why_left_out(issues: list[TreeIssue], skill_file: Path) -> str:
    for issue in issues:
        if issue.path == skill_file:
            return f"it {issue.message}"
    if os.path.lexists(skill_file):
        return "an ignore file (.gitignore or .caliperignore) leaves it out; un-ignore it"
    return "the folder holds none"


def copy_tree(
    folder: Path,
    destination: Path,
    *,
    max_bytes: int | None = None,
    tree: SkillTree | None = None,
    source_root: Path | None = None,
) -> SkillTree:
    """Copy ``folder`` to ``destination`` under the rules above; return what was scanned.

    ``tree`` is an earlier :func:`scan` of ``folder`` to copy from instead of walking it again
    (a run scans each skill once, when it resolves and hashes it, and copies that list into
    every attempt; the files' bytes are still read at each copy); ``source_root`` is
    :func:`scan`'s. Raises :class:`SkillTooLarge` when the folder (or a file that grew
    meanwhile) passes the cap, :class:`SkillUnusable` for another fatal issue of the scan.
    """
    limit = max_skill_bytes() if max_bytes is None else max_bytes
    if tree is None or tree.root != Path(folder):
        tree = scan(folder, max_bytes=limit, source_root=source_root)
    fatal = tree.fatal
    if fatal is not None:
        error = SkillTooLarge if fatal.kind == "too_large" else SkillUnusable
        text = str(tree.fatal_text())
        raise error(text[0].upper() + text[1:] + ".")
    destination.mkdir(parents=True, exist_ok=True)
    for relative in tree.dirs:
        (destination / relative).mkdir(parents=True, exist_ok=True)
    budget = limit
    for entry in tree.files:
        target = destination / entry.relative
        budget = _copy_file(entry, target, budget, folder)
    return tree


def _copy_file(entry: TreeFile, target: Path, budget: int, folder: Path) -> int:
    """Copy one file within ``budget`` bytes (what is left of the cap); return the rest."""
    with open(entry.source, "rb") as src, open(target, "wb") as out:
        while True:
            chunk = src.read(_CHUNK)
            if not chunk:
                break
            budget -= len(chunk)
            if budget < 0:
                raise SkillTooLarge(
                    f"The skill folder {folder} grew past the {MAX_BYTES_VARIABLE} limit while "
                    "it was copied."
                )
            out.write(chunk)
        out.flush()
        os.fchmod(out.fileno(), entry.mode | stat.S_IRUSR | stat.S_IWUSR)
    return budget


def content_hash(
    folder: Path, *, max_bytes: int | None = None, source_root: Path | None = None
) -> str:
    """sha256 over exactly what :func:`copy_tree` copies: each relative path, size and bytes.

    Files reached through links count (they are copied too); left-out entries (ignored,
    caliper's outputs, dangling links) do not.
    """
    return tree_hash(scan(folder, max_bytes=max_bytes, source_root=source_root))


def tree_hash(tree: SkillTree) -> str:
    """The :func:`content_hash` of an already scanned folder."""
    import hashlib  # here: `caliper validate` scans skill folders but hashes none

    digest = hashlib.sha256()
    for entry in tree.files:
        data = entry.source.read_bytes()
        digest.update(entry.relative.encode("utf-8") + b"\0")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


def nested_skill_files(skills_root: Path) -> list[Path]:
    """``SKILL.md`` files below the top one of each skill folder installed in ``skills_root``.

    Agents that scan recursively (Codex, Hermes) would list each as a separate skill; their
    backends hide them so the neighbourhood is exactly what the spec declares. Installed
    copies hold no links, so none are followed.
    """
    found: list[Path] = []
    if not skills_root.is_dir():
        return found
    for skill_dir in sorted(p for p in skills_root.iterdir() if p.is_dir()):
        for current, dirs, names in os.walk(skill_dir, followlinks=False):
            dirs.sort()
            if SKILL_FILE in names and Path(current) != skill_dir:
                found.append(Path(current) / SKILL_FILE)
    return found


_NAME_LINE = r"^name:\s*['\"]?([^'\"\n#]+?)['\"]?\s*(?:#.*)?$"
"""The frontmatter's ``name:`` line (multi-line; compiled on first use, by ``re``)."""


def skill_file_name(path: str | Path) -> str:
    """The ``name:`` in a ``SKILL.md``'s frontmatter, else its folder's name (never raises)."""
    file = Path(path)
    try:
        with open(file, encoding="utf-8", errors="replace") as handle:
            head = handle.read(16384)
    except OSError:
        return file.parent.name
    if head.startswith("---"):
        end = head.find("\n---", 3)
        match = re.search(_NAME_LINE, head[3 : end if end > 0 else len(head)], re.MULTILINE)
        if match and match.group(1).strip():
            return match.group(1).strip()
    return file.parent.name
