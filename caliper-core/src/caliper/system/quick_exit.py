"""Ending a short command's process without tearing the interpreter down.

At a normal exit Python runs the ``atexit`` handlers, flushes ``sys.stdout``/``sys.stderr``,
waits for non-daemon threads, and then frees every object and module one by one. That last
part takes a noticeable share of a short command (benchmarks/RESULTS.md) and does nothing
the operating system would not do at once when the process ends. The console
script uses :func:`exit_now` only for commands that leave no file open for writing and start
no thread or child (see ``caliper.cli.main``).
"""

from __future__ import annotations

import atexit
import os
import sys


def exit_now(code: int) -> None:
    """End the process with exit status ``code`` as a normal exit would, less the teardown.

    The ``atexit`` handlers run and both standard streams are flushed first. Returns (having
    done nothing, or having run only the handlers) when a normal exit would do more: a thread
    other than the main one is alive, or flushing a stream fails (Python then reports it as
    it always does).
    """
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    os._exit(code)
