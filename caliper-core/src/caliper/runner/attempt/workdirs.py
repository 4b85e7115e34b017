"""Keeping each attempt's final working directory (``caliper run --keep-workdirs``).

Right after the agent finished, before the judges run, the attempt's working directory is
written as a gzip-compressed tar to ``<results>/<spec>/<run-id>.workdirs/<task>-<n>.tar.gz``,
so ``caliper regrade`` can re-run ``assert:`` checks against what the agent left.

* Symlinks are stored as links, never followed; a link whose target leaves the working
  directory is left out (it could point at the sandbox's private folder or the real home).
  Special files (FIFOs, sockets, devices) are left out.
* Only the working directory is archived: the sandbox's ``home/`` and its secrets-bearing
  ``private/`` folder are siblings of it and never included.
* The files' sizes are capped per attempt and per run (``--workdir-max-bytes``,
  ``--workdirs-max-bytes``); when a cap cuts an archive, the attempt's ``workdir_note`` says
  how many files and bytes were left out.
"""

from __future__ import annotations

import io
import os
import re
import tarfile
import threading
from pathlib import Path

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
DEFAULT_RUN_MAX_BYTES = 500 * 1024 * 1024
SUFFIX = ".workdirs"


def archive_folder(results_folder: Path, run_id: str) -> Path:
    """Where a run's working-directory archives go."""
    return results_folder / f"{run_id}{SUFFIX}"


def archive_name(task_name: str, number: int) -> str:
    """A file name for one attempt's archive (the task name made file-safe)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", task_name).strip("-.") or "task"
    return f"{safe[:80]}-{number}.tar.gz"


def _inside(target: str, link: Path, root: Path) -> bool:
    resolved = (link.parent / target) if not os.path.isabs(target) else Path(target)
    try:
        Path(os.path.normpath(resolved)).relative_to(root)
    except ValueError:
        return False
    return True


class WorkdirKeeper:
    """Writes attempts' working directories as archives, within the per-attempt and per-run
    caps (thread-safe: attempts run on several workers)."""

    def __init__(
        self,
        folder: Path,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        run_max_bytes: int = DEFAULT_RUN_MAX_BYTES,
    ) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.run_max_bytes = run_max_bytes
        self._used = 0
        self._lock = threading.Lock()

    def _take(self, size: int, attempt_used: int) -> str | None:
        """Reserve ``size`` bytes; the cap that refuses it, if one does."""
        if self.max_bytes and attempt_used + size > self.max_bytes:
            return f"the per-attempt cap of {self.max_bytes:,} bytes"
        with self._lock:
            if self.run_max_bytes and self._used + size > self.run_max_bytes:
                return f"the per-run cap of {self.run_max_bytes:,} bytes"
            self._used += size
        return None

    def keep(self, task_name: str, number: int, workdir: Path) -> tuple[str | None, str | None]:
        """Archive ``workdir``; return its path relative to the results folder and a note
        (``None`` when everything was kept). Never raises: a failure is the note."""
        try:
            return self._keep(task_name, number, workdir)
        except OSError as exc:
            return None, f"the working directory could not be kept: {exc}"

    def _keep(self, task_name: str, number: int, workdir: Path) -> tuple[str | None, str | None]:
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self.folder / archive_name(task_name, number)
        root = workdir.resolve()
        used, cut_files, cut_bytes, cap = 0, 0, 0, None
        skipped_links = 0
        with tarfile.open(target, "w:gz") as tar:
            for folder, dirs, files in os.walk(root, followlinks=False):
                dirs.sort()
                here = Path(folder)
                for name in sorted(dirs):
                    path = here / name
                    if path.is_symlink():
                        continue  # added below as a link, like a file
                    tar.add(path, arcname=str(path.relative_to(root)), recursive=False)
                for name in sorted(files) + sorted(d for d in dirs if (here / d).is_symlink()):
                    path = here / name
                    arcname = str(path.relative_to(root))
                    if path.is_symlink():
                        if _inside(os.readlink(path), path, root):
                            tar.add(path, arcname=arcname, recursive=False)
                        else:
                            skipped_links += 1
                        continue
                    if not path.is_file():
                        continue  # FIFOs, sockets, devices
                    size = path.stat().st_size
                    refused = self._take(size, used)
                    if refused:
                        cap = cap or refused
                        cut_files += 1
                        cut_bytes += size
                        continue
                    used += size
                    with path.open("rb") as handle:
                        info = tar.gettarinfo(arcname=arcname, fileobj=handle)
                        tar.addfile(info, io.BufferedReader(handle))
        notes = []
        if cut_files:
            notes.append(
                f"{cut_files} file(s) ({cut_bytes:,} bytes) were left out of the kept working "
                f"directory: {cap} was reached"
            )
        if skipped_links:
            notes.append(f"{skipped_links} symlink(s) pointing outside it were left out")
        return f"{self.folder.name}/{target.name}", "; ".join(notes) or None
