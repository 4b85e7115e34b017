"""Sandboxes are deleted in the background by several threads at once (one thread fell behind
a 4-worker run on a disk where each deletion waits on the device, and the run then waited at
its end for thousands of them), never deleting a tree and a tree inside it at the same time."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from caliper.system import removals as removals_module
from caliper.system.removals import MAX_REMOVERS, BackgroundRemovals


def test_deletions_run_side_by_side() -> None:
    together = threading.Barrier(3, timeout=10)
    done: list[Path] = []

    def remove(root: Path) -> None:
        together.wait()  # only returns once three deletions are under way at once
        done.append(root)

    removals = BackgroundRemovals(remove, name="test-removal")
    roots = [Path(f"/nowhere/{n}") for n in range(3)]
    for root in roots:
        removals.add(root)
    removals.wait()
    assert sorted(done) == roots
    assert not together.broken, "the deletions ran one after another"


def test_a_tree_and_a_tree_inside_it_are_never_deleted_at_once() -> None:
    active: set[str] = set()
    overlaps: list[tuple[str, str]] = []
    lock = threading.Lock()
    order: list[str] = []

    def remove(root: Path) -> None:
        text = str(root)
        with lock:
            overlaps.extend(
                (text, other)
                for other in active
                if other.startswith(text + "/") or text.startswith(other + "/")
            )
            active.add(text)
        time.sleep(0.05)
        with lock:
            active.discard(text)
            order.append(text)

    removals = BackgroundRemovals(remove, name="test-removal")
    for root in ("/t/a/judge", "/t/a", "/t/b/judge", "/t/b", "/t/c"):
        removals.add(Path(root))
    removals.wait()
    assert sorted(order) == ["/t/a", "/t/a/judge", "/t/b", "/t/b/judge", "/t/c"]
    assert overlaps == []
    assert order.index("/t/a/judge") < order.index("/t/a")  # queued first, deleted first


def test_threads_are_bounded_and_end_once_the_queue_is_empty() -> None:
    running: set[str] = set()
    most = [0]
    lock = threading.Lock()

    def remove(root: Path) -> None:
        with lock:
            running.add(threading.current_thread().name + str(threading.get_ident()))
            most[0] = max(most[0], len(running))
        time.sleep(0.01)
        with lock:
            running.discard(threading.current_thread().name + str(threading.get_ident()))

    removals = BackgroundRemovals(remove, name="test-removal-bounded")
    for n in range(40):
        removals.add(Path(f"/many/{n}"))
    removals.wait()
    assert 1 <= most[0] <= MAX_REMOVERS
    deadline = time.monotonic() + 5
    while any(t.name == "test-removal-bounded" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "removal threads outlived the queue"
        time.sleep(0.01)


def test_a_deletion_that_raises_does_not_stop_the_others() -> None:
    done: list[Path] = []

    def remove(root: Path) -> None:
        if root.name == "bad":
            raise PermissionError("nope")
        done.append(root)

    removals = BackgroundRemovals(remove, name="test-removal")
    for name in ("bad", "good1", "good2"):
        removals.add(Path("/r") / name)
    removals.wait()  # returns: the failure is the ledger's to clean up
    assert sorted(p.name for p in done) == ["good1", "good2"]


def test_a_steady_stream_of_deletions_reuses_its_threads(monkeypatch) -> None:
    # an idle thread used to end as soon as another thread's deletion ended (any notify cut
    # its linger short), so where deletions sometimes overlapped a thread was started for
    # about every second sandbox (250 starts in a 1,000-attempt run), each on an attempt's
    # path; this stream started 149 threads for 150 deletions
    monkeypatch.setattr(removals_module, "LINGER_SECONDS", 30.0)
    threads: list[threading.Thread] = []  # kept, so no two threads can look the same
    lock = threading.Lock()

    def remove(root: Path) -> None:
        me = threading.current_thread()
        with lock:
            if not any(seen is me for seen in threads):
                threads.append(me)
        time.sleep(0.005 if int(root.name) % 2 else 0.001)  # now longer, now shorter

    removals = BackgroundRemovals(remove, name="test-removal-stream")
    try:
        for n in range(150):
            removals.add(Path(f"/stream/{n}"))
            time.sleep(0.003)
    finally:
        removals.wait()
    assert len(threads) <= MAX_REMOVERS, f"{len(threads)} threads started for 150 deletions"


def test_an_idle_thread_lingers_while_another_finishes(monkeypatch) -> None:
    monkeypatch.setattr(removals_module, "LINGER_SECONDS", 30.0)
    release = {name: threading.Event() for name in ("first", "second")}
    started = {name: threading.Event() for name in ("first", "second")}

    def remove(root: Path) -> None:
        started[root.name].set()
        assert release[root.name].wait(10)

    def alive() -> int:
        return sum(t.name == "test-removal-linger" for t in threading.enumerate())

    removals = BackgroundRemovals(remove, name="test-removal-linger")
    try:
        removals.add(Path("/linger/first"))
        assert started["first"].wait(10)
        removals.add(Path("/linger/second"))  # the first thread is busy: a second starts
        assert started["second"].wait(10)
        release["first"].set()  # the first thread goes idle and lingers
        time.sleep(0.2)
        release["second"].set()  # the second's deletion ends: the first must not end
        time.sleep(0.2)
        assert alive() == 2
    finally:
        for event in release.values():
            event.set()
        removals.wait()  # the run finished: both end at once, without waiting out the linger
    deadline = time.monotonic() + 5
    while alive():
        assert time.monotonic() < deadline, "idle removal threads outlived wait()"
        time.sleep(0.01)


def test_a_thread_waiting_behind_a_related_deletion_takes_a_new_unrelated_tree() -> None:
    release = threading.Event()
    started: dict[str, threading.Event] = {
        name: threading.Event() for name in ("/t/a/judge", "/t/a", "/t/b")
    }

    def remove(root: Path) -> None:
        started[str(root)].set()
        if str(root) == "/t/a/judge":
            assert release.wait(10)

    removals = BackgroundRemovals(remove, name="test-removal-related")
    try:
        removals.add(Path("/t/a/judge"))  # one thread deletes it, slowly
        assert started["/t/a/judge"].wait(10)
        removals.add(Path("/t/a"))  # a second thread starts, and waits: /t/a holds the judge's
        time.sleep(0.2)
        removals.add(Path("/t/b"))  # unrelated: the waiting thread takes it at once
        assert started["/t/b"].wait(5), "/t/b waited for an unrelated deletion to end"
        assert not started["/t/a"].is_set()
    finally:
        release.set()
        removals.wait()
    assert all(event.is_set() for event in started.values())
