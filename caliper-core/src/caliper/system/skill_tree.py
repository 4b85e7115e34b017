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
from typing import TYPE_CHECKING, NoReturn

from caliper.system import attrs_classes, skill_ignore

if TYPE_CHECKING:
    from caliper.system.skill_ignore import Matcher

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


@attrs_classes.frozen
class TreeIssue:
    """Something in a skill folder that is left out (or, when ``fatal``, stops its use).

    ``path`` is where it sits in the source folder; ``message`` says what it is and what to
    do about it.
    """

    path: Path
    kind: str  # "outside", "dangling", "loop", "special", "unreadable", "too_large"
    message: str
    fatal: bool = False


@attrs_classes.frozen
class TreeFile:
    """One file to copy: its path relative to the skill folder, where to read it, its size and
    permission bits when scanned."""

    relative: str
    source: Path
    size: int
    mode: int = 0o644


@attrs_classes.frozen
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
    limit = max_skill_bytes() if max_bytes is None else max_bytes
    root = Path(folder)
    if source_root is None:
        source_root = source_root_for(root, spec_dir)
    return _Scanner(root, source_root, limit).run()


class _Stop(Exception):
    """A fatal issue was recorded: :class:`_Scanner` ends the walk with what it listed so far."""


class _Scanner:
    """One walk of a skill folder for :func:`scan`: the rules it applies and the folders, files,
    issues and byte total it gathers on the way."""

    def __init__(self, root: Path, source_root: Path, limit: int) -> None:
        """Prepare to walk ``root``, whose links may reach into ``source_root``, with a size cap
        of ``limit`` bytes."""
        self.root = root
        self.source_root = source_root
        self.limit = limit
        self.root_real = os.path.realpath(root)
        self.source_real = real_root(str(source_root))
        self.dirs: list[str] = []
        self.files: list[TreeFile] = []
        self.issues: list[TreeIssue] = []
        self.total = 0

    def run(self) -> SkillTree:
        """Walk the folder depth first and return what it holds (the listing so far when a
        fatal issue stops the walk)."""
        top = skill_ignore.matcher_for(str(self.root), str(self.source_root))
        # (folder as reached, its relative path, real paths of it and its ancestors, ignore rules)
        stack: list[tuple[Path, str, frozenset[str], Matcher]] = [
            (self.root, "", frozenset({self.root_real}), top)
        ]
        try:
            while stack:
                stack.extend(self._visit_folder(*stack.pop()))
        except _Stop:
            return SkillTree(
                self.root, tuple(self.dirs), tuple(self.files), tuple(self.issues), self.total
            )
        return self._finish()

    def _visit_folder(
        self, current: Path, relative: str, ancestors: frozenset[str], rules: Matcher
    ) -> list[tuple[Path, str, frozenset[str], Matcher]]:
        """List the entries of one folder; return the sub-folders still to walk, in the order
        they are pushed on the stack."""
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name, reverse=True)
        except OSError as exc:
            self.issues.append(
                TreeIssue(current, "unreadable", f"cannot be read ({exc.strerror}); left out")
            )
            return []
        if any(e.name in skill_ignore.IGNORE_FILES for e in entries):
            rules = rules.added(skill_ignore.read_rules(str(current)))
        below: list[tuple[Path, str, frozenset[str], Matcher]] = []
        for entry in entries:
            name = entry.name
            if _ignored(name) or name in skill_ignore.NEVER_INSTALLED:
                continue
            path = Path(entry.path)
            rel = f"{relative}/{name}" if relative else name
            if entry.is_symlink() and not self._link_usable(path):
                continue
            try:
                info = os.stat(path)
            except OSError as exc:
                self.issues.append(
                    TreeIssue(path, "unreadable", f"cannot be read ({exc.strerror}); left out")
                )
                continue
            is_dir = stat.S_ISDIR(info.st_mode)
            if rules.layers and rules.ignored(name, is_dir):
                continue
            self._check_entry_count(rel)
            if is_dir:
                real = os.path.realpath(path)
                if self._is_loop(path, real, ancestors):
                    continue
                self.dirs.append(rel)
                below.append((path, rel, ancestors | {real}, rules.enter(name)))
            elif stat.S_ISREG(info.st_mode):
                self._add_file(entry.path, path, rel, info, top=not relative)
            else:
                self.issues.append(
                    TreeIssue(
                        path,
                        "special",
                        "is not a regular file or folder (a FIFO, socket or device); left out",
                    )
                )
        return below

    def _link_usable(self, path: Path) -> bool:
        """Whether the link ``path`` may be followed: a dangling link is reported and left out
        (``False``); one that leaves the folder and the source tree stops the walk."""
        real = os.path.realpath(path)
        target = os.readlink(path)
        if not os.path.exists(path):
            self.issues.append(
                TreeIssue(
                    path,
                    "dangling",
                    f"is a link to {target}, which does not exist; it is left out "
                    "(remove the link or restore its target)",
                )
            )
            return False
        if not _inside(real, self.root_real) and not _inside(real, self.source_real):
            self._refuse(
                TreeIssue(
                    path,
                    "outside",
                    f"is a link to {target}, which leaves {self.source_root} (the tree the "
                    "skill comes from); a skill with such a link is refused. Copy what "
                    "it points to into the skill folder instead of linking it",
                    fatal=True,
                )
            )
        return True

    def _check_entry_count(self, rel: str) -> None:
        """Stop the walk when the folder already holds :data:`MAX_ENTRIES` entries (``rel`` is
        the entry that would exceed it)."""
        if len(self.dirs) + len(self.files) >= MAX_ENTRIES:
            self._refuse(
                TreeIssue(
                    self.root,
                    "too_large",
                    f"holds more than {MAX_ENTRIES} files and folders (reached at {rel}); "
                    "a skill this big is refused. Remove files, or links that repeat "
                    "folders, from the skill folder",
                    fatal=True,
                )
            )

    def _is_loop(self, path: Path, real: str, ancestors: frozenset[str]) -> bool:
        """Whether the folder ``path`` (really ``real``) is one it sits in; such a loop is
        reported and left out."""
        if real not in ancestors:
            return False
        self.issues.append(
            TreeIssue(
                path,
                "loop",
                f"is a link back to {os.readlink(path)}, a folder it sits in (a "
                "loop); it is left out (remove the link)",
            )
        )
        return True

    def _add_file(
        self, entry_path: str, path: Path, rel: str, info: os.stat_result, *, top: bool
    ) -> None:
        """List the regular file ``path`` (``top`` when it sits in the skill folder itself),
        unless caliper wrote it; stop the walk when it takes the total over the size cap."""
        name = path.name
        output = skill_ignore.caliper_output(entry_path, name, top=top)
        if output is not None:
            self.issues.append(
                TreeIssue(path, "output", f"is {output}; it is not part of the skill")
            )
            return
        self.total += info.st_size
        if self.total > self.limit:
            self._refuse(
                TreeIssue(
                    self.root,
                    "too_large",
                    f"holds more than {_size_text(self.limit)} (reached at {rel}); a skill "
                    f"this big is refused. Remove large files from the skill folder, "
                    f"or raise the limit with {MAX_BYTES_VARIABLE} (e.g. 500M)",
                    fatal=True,
                )
            )
        self.files.append(TreeFile(rel, path, info.st_size, stat.S_IMODE(info.st_mode)))
        if skill_ignore.looks_like_output(name):
            self.issues.append(
                TreeIssue(
                    path,
                    "output_like",
                    "looks like something a command wrote (a log or a report), not "
                    "part of the skill; it is installed. List it in .caliperignore "
                    "(or .gitignore) to leave it out",
                )
            )

    def _refuse(self, issue: TreeIssue) -> NoReturn:
        """Record the fatal ``issue`` and stop the walk."""
        self.issues.append(issue)
        raise _Stop

    def _finish(self) -> SkillTree:
        """The completed listing, sorted, with a fatal ``no_skill_file`` issue when the top
        ``SKILL.md`` is not among the files."""
        files = sorted(self.files, key=lambda f: f.relative)
        issues = self.issues
        if not any(f.relative == SKILL_FILE for f in files):
            issues.append(
                TreeIssue(
                    self.root / SKILL_FILE,
                    "no_skill_file",
                    f"would not be installed: {_why_left_out(issues, self.root / SKILL_FILE)}",
                    fatal=True,
                )
            )
        return SkillTree(
            self.root, tuple(sorted(self.dirs)), tuple(files), tuple(issues), self.total
        )


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
