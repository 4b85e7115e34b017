"""Which files of a skill folder are not part of the skill: ignore files and caliper's outputs.

Three rules, applied by :func:`caliper.system.skill_tree.scan`:

* ``.gitignore`` and ``.caliperignore`` files (gitignore syntax) in the skill folder, in its
  subfolders, and in every folder above it up to the source's root (the repository or the
  spec's folder tree) leave out what they match, with git's precedence: a deeper file wins
  over a shallower one, a later line over an earlier one, ``!`` re-includes, and nothing
  inside an excluded folder comes back. The patterns are matched as written (a committed
  file that matches is left out too), so a local clone and the same repository as a git
  source install the same files.
* files caliper itself wrote (an HTML page, a JUnit XML file, a results JSON file, a Markdown
  summary) are recognised by the marks its writers put in them and are never installed;
* files whose names look like outputs (logs, reports) are installed but reported, so the
  author can add them to ``.caliperignore``.
"""

from __future__ import annotations

import fnmatch
import os
import re
from functools import lru_cache

IGNORE_FILES = (".gitignore", ".caliperignore")
"""The ignore files read in each folder (both with gitignore syntax)."""
NEVER_INSTALLED = (".caliperignore",)
"""Files that configure caliper, not the skill: left out of every install."""

_HEAD_BYTES = 2048
_SNIFFED = (".html", ".htm", ".xml", ".json", ".md")
_OUTPUT_MARKS = (
    (re.compile(rb'<meta name="generator" content="caliper"'), "an HTML page caliper wrote"),
    (re.compile(rb'<testsuites\b[^>]*\bname="caliper[ "]'), "a JUnit XML file caliper wrote"),
    (
        re.compile(rb'\A\s*\{\s*"meta"\s*:\s*\{\s*"run_id"\s*:'),
        "a results file caliper wrote",
    ),
    (
        re.compile(rb"\A## Caliper(: | compare: ).*\n\n(run `|before `)"),
        "a Markdown summary caliper wrote",
    ),
)
_OUTPUT_LIKE = ("*.log", "*.out", "junit*.xml", "report*.html", "*results*.json", "*.tmp")
"""Names that usually are something a command wrote, not part of a skill."""


class Rule:
    """One gitignore line: a compiled pattern, whether it negates, whether it matches folders
    only, and whether it is anchored to its file's folder (it contains a ``/``)."""

    __slots__ = ("anchored", "dir_only", "negate", "regex")

    def __init__(self, regex: re.Pattern[str], negate: bool, dir_only: bool, anchored: bool):
        self.regex = regex
        self.negate = negate
        self.dir_only = dir_only
        self.anchored = anchored

    def matches(self, relative: str, is_dir: bool) -> bool:
        """Whether this rule matches ``relative`` (``/``-separated, from the rule's folder)."""
        if self.dir_only and not is_dir:
            return False
        target = relative if self.anchored else relative.rsplit("/", 1)[-1]
        return self.regex.fullmatch(target) is not None


def _translate(pattern: str) -> str:
    """A gitignore glob as a regular expression (``*``, ``?``, ``[...]``, ``**``)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                at_start = i == 0 or pattern[i - 1] == "/"
                after = i + 2
                if at_start and (after == n or pattern[after] == "/"):
                    if after == n:  # trailing "/**": everything inside
                        out.append(".*")
                        i = after
                    else:  # "**/": zero or more folders
                        out.append("(?:.*/)?")
                        i = after + 1
                    continue
            while i < n and pattern[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def parse(text: str) -> tuple[Rule, ...]:
    """The rules of one ignore file's text (blank lines and ``#`` comments skipped)."""
    rules: list[Rule] = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        # trailing spaces are ignored unless escaped with a backslash
        stripped = line.rstrip(" ")
        if stripped.endswith("\\") and len(stripped) < len(line):
            stripped += " "
        line = stripped
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate or line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        try:
            regex = re.compile(_translate(line), re.DOTALL)
        except re.error:
            continue
        rules.append(Rule(regex, negate, dir_only, anchored))
    return tuple(rules)


def read_rules(folder: str) -> tuple[Rule, ...]:
    """The rules of ``folder``'s ignore files (none when it has none or they are unreadable)."""
    found: tuple[Rule, ...] = ()
    for name in IGNORE_FILES:
        try:
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
                found += parse(handle.read(1024 * 1024))
        except OSError:
            continue
    return found


@lru_cache(maxsize=1024)
def _folder_rules(folder: str) -> tuple[Rule, ...]:
    """:func:`read_rules` of a folder above skills (many skills share one)."""
    return read_rules(folder)


class Matcher:
    """The ignore rules in force in one folder: ``(prefix, rules)`` layers, outermost first.

    ``prefix`` is the folder's path relative to the layer's folder (``""`` or ending in ``/``).
    """

    __slots__ = ("layers",)

    def __init__(self, layers: tuple[tuple[str, tuple[Rule, ...]], ...] = ()):
        self.layers = layers

    def ignored(self, name: str, is_dir: bool) -> bool:
        """Whether the entry ``name`` of this folder is left out (the last matching rule wins;
        deeper layers come later)."""
        result = False
        for prefix, rules in self.layers:
            relative = prefix + name
            for rule in rules:
                if rule.negate == result and rule.matches(relative, is_dir):
                    result = not rule.negate
        return result

    def enter(self, name: str) -> Matcher:
        """The matcher of the subfolder ``name`` (before its own ignore files are added)."""
        return Matcher(tuple((prefix + name + "/", found) for prefix, found in self.layers))

    def added(self, rules: tuple[Rule, ...]) -> Matcher:
        """This matcher with the folder's own ``rules`` as the innermost layer."""
        return Matcher((*self.layers, ("", rules))) if rules else self


def matcher_for(folder: str, root: str | None) -> Matcher:
    """The rules in force for the entries of ``folder`` from the folders above it: those of
    every folder from ``root`` (the source's root, when ``folder`` lies inside it) down to
    ``folder``'s parent (``folder``'s own ignore files are added by whoever lists it)."""
    here = os.path.abspath(folder)
    chain: list[str] = []
    current = here
    if root is not None:
        top = os.path.abspath(root)
        if here != top and here.startswith(top.rstrip(os.sep) + os.sep):
            while current != top:
                current = os.path.dirname(current)
                chain.append(current)
    layers: list[tuple[str, tuple[Rule, ...]]] = []
    for level in reversed(chain):
        rules = _folder_rules(level)
        if rules:
            relative = os.path.relpath(here, level).replace(os.sep, "/")
            layers.append(("" if relative == "." else relative + "/", rules))
    return Matcher(tuple(layers))


def caliper_output(path: str, name: str, *, top: bool = True) -> str | None:
    """What caliper output the file is (by its writer's marks), or ``None`` for any other.

    Only HTML, XML, JSON and Markdown files are read (their first bytes); Markdown files only
    at the skill folder's ``top`` level, where a summary is saved (the references below it
    are Markdown too, and are not read)."""
    lower = name.lower()
    if not lower.endswith(_SNIFFED) or name == "SKILL.md" or (not top and lower.endswith(".md")):
        return None
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except OSError:
        return None
    for mark, what in _OUTPUT_MARKS:
        if mark.search(head):
            return what
    return None


def looks_like_output(name: str) -> bool:
    """Whether ``name`` is one that commands usually write (a log, a report)."""
    lower = name.lower()
    return any(fnmatch.fnmatchcase(lower, pattern) for pattern in _OUTPUT_LIKE)
