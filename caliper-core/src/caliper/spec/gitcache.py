"""A local cache of git repositories that skills are fetched from.

Layout under ``<cache root>/skills/``:

* ``repos/<key>.git`` — a bare clone per repository, fetched into as needed;
* ``checkouts/<key>/<sha>/`` — the files of one commit (no ``.git``), immutable once made;
* ``checkouts/<key>/<sha>.left-out.json`` — links of that commit that point outside the
  repository (absolute or through ``..``), which are not unpacked; see :meth:`left_out_links`;
* ``locks/<key>.lock`` — an ``fcntl`` lock held while a repository or its checkouts change.

Checkouts are written to a temporary folder beside their final place and renamed into it, so a
reader never sees half a checkout and concurrent runs never corrupt one another. Offline
lookups (``caliper validate``) only read the bare clone and never touch the network.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from caliper.errors import CaliperError
from caliper.spec import safetar
from caliper.system import attrs_classes

# subprocess, tarfile, shutil, tempfile and hashlib are imported where a git source is
# actually resolved: `caliper validate` of a spec with only local skills never needs them.

NETWORK_TIMEOUT = 600.0
LOCAL_TIMEOUT = 120.0
GITHUB_SHORTHAND = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$")
HEX_REF = re.compile(r"^[0-9a-fA-F]{4,40}$")
SAFE_REF = re.compile(r"^[A-Za-z0-9._/+@{}^~-]+$")
DEFAULT_REF = "refs/caliper/default"


def _left_out_file(checkout: Path) -> Path:
    return checkout.parent / f"{checkout.name}.left-out.json"


def _leaves_repository(name: str, target: str, *, symbolic: bool) -> bool:
    if not target or os.path.isabs(target):
        return True
    base = os.path.dirname(name) if symbolic else ""
    resolved = os.path.normpath(os.path.join(base, target))
    return resolved == ".." or resolved.startswith("../") or os.path.isabs(resolved)


def split_links_out(
    members: Sequence[tarfile.TarInfo],
) -> tuple[list[tarfile.TarInfo], list[dict[str, str]]]:
    """Members to unpack, and the links left out because they point outside the repository.

    A repository holding such a link stays usable: the link is simply not unpacked (a skill
    copy would leave it out anyway), instead of the whole checkout being refused.
    """
    kept: list[tarfile.TarInfo] = []
    left_out: list[dict[str, str]] = []
    for member in members:
        if (member.issym() or member.islnk()) and _leaves_repository(
            member.name, member.linkname, symbolic=member.issym()
        ):
            left_out.append({"path": member.name, "target": member.linkname})
        else:
            kept.append(member)
    return kept, left_out


class GitSourceError(CaliperError):
    """A git skill source could not be fetched or does not hold what the spec names."""


class NotCached(Exception):
    """An offline lookup found nothing usable in the cache (the message says what)."""


def cache_root() -> Path:
    """``$CALIPER_CACHE_DIR``, else ``$XDG_CACHE_HOME/caliper``, else ``~/.cache/caliper``."""
    explicit = os.environ.get("CALIPER_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "caliper"


def is_github_shorthand(repo: str) -> bool:
    """Whether ``repo`` is ``owner/name`` (which means a GitHub repository)."""
    return bool(GITHUB_SHORTHAND.match(repo)) and not repo.startswith(".")


def clone_url(repo: str, spec_dir: Path) -> str:
    """What to clone for a spec's ``repo:`` value.

    ``owner/name`` becomes ``https://github.com/owner/name.git``; a URL or ``user@host:path``
    is used as written; a filesystem path (``./x``, ``../x``, ``/x``, ``~/x``) is made absolute
    against the spec's folder.
    """
    if "://" in repo or re.match(r"^[\w.-]+@[\w.-]+:", repo):
        return repo
    if repo.startswith(("./", "../", "/", "~")) or repo in (".", ".."):
        return str((spec_dir / Path(repo).expanduser()).resolve())
    if is_github_shorthand(repo):
        return f"https://github.com/{repo.removesuffix('.git')}.git"
    return str((spec_dir / repo).resolve())


def ref_problem(ref: str) -> str | None:
    """Why ``ref`` cannot be a git ref name or commit, or ``None`` when it can."""
    if not ref.strip():
        return "must not be empty"
    if ref.startswith("-"):
        return "must not start with '-'"
    if not SAFE_REF.match(ref) or ".." in ref:
        return "is not a valid branch, tag or commit name"
    return None


def _repo_key(url: str) -> str:
    tail = re.sub(r"\.git$", "", url.rstrip("/")).replace(":", "/").split("/")[-2:]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join(p for p in tail if p)).strip("-.")
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:12]
    return f"{slug or 'repo'}-{digest}"


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(GIT_TERMINAL_PROMPT="0", GCM_INTERACTIVE="never", LC_ALL="C")
    return env


@attrs_classes.frozen
class GitResult:
    """How a git command ended."""

    ok: bool
    stdout: str
    stderr: str


def _git(
    args: Sequence[str], *, cwd: Path | None = None, timeout: float = LOCAL_TIMEOUT
) -> GitResult:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=_git_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as exc:
        raise GitSourceError(
            "git is not installed, and the spec has a git skill source.",
            hint="Install git, or point `skills:` at a local folder instead.",
        ) from exc
    except subprocess.TimeoutExpired:
        return GitResult(False, "", f"git {args[0]} took longer than {timeout:.0f}s")
    return GitResult(done.returncode == 0, done.stdout.strip(), done.stderr.strip())


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


@attrs_classes.frozen
class Checkout:
    """One commit of a repository, unpacked in the cache. ``note`` reports a fallback."""

    url: str
    sha: str
    directory: Path
    note: str | None = None


class GitCache:
    """Resolves ``(repository, ref)`` to a commit and an unpacked copy of it."""

    def __init__(self, root: Path | None = None):
        self.root = (root if root is not None else cache_root()) / "skills"

    def mirror_of(self, url: str) -> Path:
        return self.root / "repos" / f"{_repo_key(url)}.git"

    def checkout_of(self, url: str, sha: str) -> Path:
        return self.root / "checkouts" / _repo_key(url) / sha

    @contextlib.contextmanager
    def _locked(self, url: str) -> Iterator[None]:
        lock_dir = self.root / "locks"
        lock_dir.mkdir(parents=True, exist_ok=True)
        with open(lock_dir / f"{_repo_key(url)}.lock", "a+") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    # -- resolving ------------------------------------------------------------------------
    def resolve(
        self, url: str, ref: str | None, *, offline: bool = False, shown_as: str | None = None
    ) -> Checkout:
        """The commit ``ref`` names (the default branch when ``None``), unpacked.

        Offline, only the cache is consulted and :class:`NotCached` says what is missing.
        Online, a pinned commit already in the cache costs no network; branches, tags and
        unpinned sources are fetched, falling back to the cache (with a note) if that fails.
        """
        shown = shown_as or url
        if ref is not None and (why := ref_problem(ref)):
            raise GitSourceError(f"git source {shown}: ref {ref!r} {why}.")
        if offline and not self.mirror_of(url).is_dir():
            raise NotCached(f"git source {shown} is not in the cache")
        try:
            with self._locked(url):
                if offline:
                    return self._resolve_cached(url, ref, shown)
                return self._resolve_online(url, ref, shown)
        except OSError as exc:
            raise GitSourceError(
                f"git source {shown}: cannot use the cache in {self.root}: {exc.strerror or exc}",
                hint="Set CALIPER_CACHE_DIR to a writable folder.",
            ) from exc

    def _resolve_cached(self, url: str, ref: str | None, shown: str) -> Checkout:
        mirror = self.mirror_of(url)
        sha = self._rev_parse(mirror, ref)
        if sha is None:
            raise NotCached(
                f"git source {shown}: {ref or 'the default branch'} is not in the cache"
            )
        return Checkout(url, sha, self._export(url, mirror, sha))

    def _resolve_online(self, url: str, ref: str | None, shown: str) -> Checkout:
        mirror = self.mirror_of(url)
        note = None
        if not mirror.is_dir():
            self._clone(url, mirror, shown)
            sha = self._rev_parse(mirror, ref) or self._fetch_commit(mirror, ref, shown)
        elif (
            ref is not None
            and HEX_REF.match(ref)
            and (cached := self._rev_parse(mirror, ref))
            and cached.lower().startswith(ref.lower())
        ):
            sha = cached
        else:
            fetched = self._fetch(mirror)
            sha = self._rev_parse(mirror, ref)
            if sha is None and fetched.ok:
                sha = self._fetch_commit(mirror, ref, shown)
            if sha is None:
                raise GitSourceError(
                    f"git source {shown}: could not fetch it "
                    f"({_last_line(fetched.stderr)}) and "
                    f"{ref or 'its default branch'} is not in the cache.",
                    hint="Check the network and the `repo:`/`ref:` values.",
                )
            if not fetched.ok:
                note = (
                    f"git source {shown}: could not reach the remote "
                    f"({_last_line(fetched.stderr)}); using the cached commit {sha[:12]}"
                )
        return Checkout(url, sha, self._export(url, mirror, sha), note)

    def _clone(self, url: str, mirror: Path, shown: str) -> None:
        mirror.parent.mkdir(parents=True, exist_ok=True)
        temp = Path(tempfile.mkdtemp(prefix=".clone-", dir=mirror.parent))
        try:
            done = _git(
                ["clone", "--bare", "--quiet", "--", url, str(temp)], timeout=NETWORK_TIMEOUT
            )
            if not done.ok:
                raise GitSourceError(
                    f"git source {shown}: could not clone {url}: {_last_line(done.stderr)}",
                    hint="Check `repo:` (owner/name means a GitHub repository) and the network.",
                )
            _git(["update-ref", DEFAULT_REF, "HEAD"], cwd=temp)
            os.rename(temp, mirror)
        finally:
            shutil.rmtree(temp, ignore_errors=True)

    def _fetch(self, mirror: Path) -> GitResult:
        heads = _git(
            ["fetch", "--quiet", "--prune", "--tags", "origin", "+refs/heads/*:refs/heads/*"],
            cwd=mirror,
            timeout=NETWORK_TIMEOUT,
        )
        if not heads.ok:
            return heads
        default = _git(["fetch", "--quiet", "origin", "HEAD"], cwd=mirror, timeout=NETWORK_TIMEOUT)
        if default.ok:
            _git(["update-ref", DEFAULT_REF, "FETCH_HEAD"], cwd=mirror)
        return GitResult(True, "", "")

    def _fetch_commit(self, mirror: Path, ref: str | None, shown: str) -> str:
        """Fetch a commit no branch or tag reaches (allowed for full SHAs by most hosts)."""
        if ref is not None and re.fullmatch(r"[0-9a-fA-F]{40}", ref):
            _git(["fetch", "--quiet", "origin", ref], cwd=mirror, timeout=NETWORK_TIMEOUT)
            sha = self._rev_parse(mirror, ref)
            if sha is not None:
                return sha
        raise GitSourceError(
            f"git source {shown}: {ref or 'the default branch'} names no commit in the repository.",
            hint="Check `ref:`: a branch, a tag, or a commit (full or abbreviated).",
        )

    @staticmethod
    def _rev_parse(mirror: Path, ref: str | None) -> str | None:
        candidates = (
            [f"{ref}^{{commit}}"]
            if ref is not None
            else [f"{DEFAULT_REF}^{{commit}}", "HEAD^{commit}"]
        )
        for candidate in candidates:
            done = _git(
                ["rev-parse", "--verify", "--quiet", "--end-of-options", candidate], cwd=mirror
            )
            if done.ok and done.stdout:
                return done.stdout.splitlines()[0].strip()
        return None

    @staticmethod
    def left_out_links(checkout: Path) -> list[dict[str, str]]:
        """``{"path", "target"}`` of each link of ``checkout`` that was not unpacked because it
        points outside the repository (empty when none, or for checkouts made before)."""
        try:
            data = json.loads(_left_out_file(checkout).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []

    def _export(self, url: str, mirror: Path, sha: str) -> Path:
        final = self.checkout_of(url, sha)
        if final.is_dir():
            return final
        final.parent.mkdir(parents=True, exist_ok=True)
        temp = Path(tempfile.mkdtemp(prefix=f".{sha[:12]}-", dir=final.parent))
        try:
            archive = temp / ".archive.tar"
            done = _git(["archive", "--format=tar", "-o", str(archive), sha], cwd=mirror)
            if not done.ok:
                raise GitSourceError(
                    f"could not unpack {url} at {sha[:12]}: {_last_line(done.stderr)}"
                )
            tree = temp / "tree"
            try:
                left_out: list[dict[str, str]] = []

                def leave_links_out(
                    members: list[tarfile.TarInfo],
                ) -> list[tarfile.TarInfo]:
                    kept, dropped = split_links_out(members)
                    left_out.extend(dropped)
                    return kept

                safetar.extract(archive, tree, select=leave_links_out)
            except safetar.ArchiveTooBig as exc:
                raise GitSourceError(
                    f"could not unpack {url} at {sha[:12]}: {exc}",
                    hint="Raise the limit (0 turns it off) if the repository is this big.",
                ) from exc
            except tarfile.TarError as exc:
                raise GitSourceError(
                    f"could not unpack {url} at {sha[:12]}: {exc} (links that point outside "
                    "the repository are refused)"
                ) from exc
            tree.mkdir(exist_ok=True)
            sidecar = temp / "left-out.json"
            sidecar.write_text(json.dumps(left_out), encoding="utf-8")
            os.replace(sidecar, _left_out_file(final))
            try:
                os.rename(tree, final)
            except OSError:
                if not final.is_dir():
                    raise
        finally:
            shutil.rmtree(temp, ignore_errors=True)
        return final
