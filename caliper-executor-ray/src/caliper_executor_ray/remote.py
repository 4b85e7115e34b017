"""What runs on the nodes: the per-node pre-flight and one attempt per Ray task.

Imported only once a run connected to a cluster (it imports Ray). An attempt task runs the
attempt on a thread of the worker process and waits for it; ``ray.cancel`` (not forced)
raises ``KeyboardInterrupt`` in the waiting thread, which then stops the attempt the way
Ctrl-C stops a local run: caliper's process layer ends the agent's process group and every
descendant, the task's ``cleanup:`` runs, the sandbox is deleted, and the task returns a
finished attempt with no record. A forced cancel would kill the worker and leave the agent's
processes running on the node, so the session never forces one.
"""

from __future__ import annotations

import socket
import sys
import threading
from typing import Any

import ray

from caliper.plugin.executor import AttemptJob, FinishedAttempt

STOP_WAIT_SECONDS = 90.0
"""How long a cancelled task waits for its attempt to finish its cleanup."""


def node_label() -> str:
    """This node as the results name it: ``host (node id prefix)``."""
    node_id = ray.get_runtime_context().get_node_id() or "?"
    return f"{socket.gethostname()} ({node_id[:12]})"


def _portable(bundle: bytes) -> Any:
    from caliper.runner.run.portable import PortableRun

    return PortableRun.from_bytes(bundle)


@ray.remote(num_cpus=0, max_retries=0)
def check_node(bundle: bytes) -> tuple[str, str | None, str | None]:
    """Pre-flight on one node: (node label, problem or ``None``, the CLI version found)."""
    from caliper.runner.run.portable import check_node as check
    from caliper.runner.run.portable import prepared_for

    portable = _portable(bundle)
    problem = check(portable)
    version = None
    if problem is None:
        prepared = prepared_for(portable)
        try:
            version = prepared.engine.backend.cli_version(prepared.cli_path)
        except Exception:  # a version probe never fails a pre-flight
            version = None
    return node_label(), problem, version


def _say(text: str) -> None:
    """One line in this worker's log on its node (never a secret: names and numbers only)."""
    print(f"caliper-executor-ray: {text}", file=sys.stdout, flush=True)


def run_attempt(bundle: bytes, job: AttemptJob) -> FinishedAttempt:
    """Run ``job`` of the bundle on this node; its ``node`` names this node."""
    from caliper.runner.run.control import RunController
    from caliper.runner.run.portable import run_job
    from caliper.system import process

    label = node_label()
    _say(f"attempt {job.task_name!r} #{job.number} starts on {label}")
    process.reset_stop()
    process.adopt_orphans()
    controller = RunController()
    outcome: dict[str, FinishedAttempt] = {}

    def work() -> None:
        outcome["finished"] = run_job(_portable(bundle), job, controller)

    thread = threading.Thread(target=work, name="caliper-attempt", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.2)
    except KeyboardInterrupt:  # ray.cancel: stop the attempt like Ctrl-C does locally
        _say(f"attempt {job.task_name!r} #{job.number} cancelled; stopping it")
        controller.request_stop("cancelled", kill=True)
        controller.drain()
        try:
            thread.join(STOP_WAIT_SECONDS)
        except KeyboardInterrupt:  # cancelled again: cut the cleanup short too
            process.stop_all(force=True)
            thread.join(STOP_WAIT_SECONDS)
        process.sweep_orphans()
        return FinishedAttempt(job=job, record=None, node=label)
    process.sweep_orphans()
    finished = outcome.get("finished") or FinishedAttempt(job=job, record=None)
    finished.node = label
    _say(f"attempt {job.task_name!r} #{job.number} finished on {label}")
    return finished


attempt_task = ray.remote(num_cpus=1, max_retries=0)(run_attempt)
"""``run_attempt`` as a Ray task taking one CPU of a node, never retried by Ray (caliper's
own ``--retries`` already ran inside it)."""
