"""What runs on the nodes: the per-node pre-flight and one attempt per Ray task.

Imported only once a run connected to a cluster (it imports Ray). Both tasks hand the run's
:class:`~caliper.plugin.executor.RunBundle` (from Ray's object store) to :mod:`caliper.remote`.
An attempt task runs :func:`caliper.remote.run_job`, which runs the attempt on a thread of the
worker process and waits for it; ``ray.cancel`` (not forced) raises ``KeyboardInterrupt`` in
the waiting thread, which then stops the attempt the way Ctrl-C stops a local run: caliper's
process layer ends the agent's process group and every descendant, the task's ``cleanup:``
runs, the sandbox is deleted, and the task returns a finished attempt with no record. A
forced cancel would kill the worker and leave the agent's processes running on the node, so
the session never forces one.
"""

from __future__ import annotations

import socket
import sys

import ray

from caliper import remote
from caliper.plugin.executor import AttemptJob, FinishedAttempt, RunBundle


def node_label() -> str:
    """This node as the results name it: ``host (node id prefix)``."""
    node_id = ray.get_runtime_context().get_node_id() or "?"
    return f"{socket.gethostname()} ({node_id[:12]})"


@ray.remote(num_cpus=0, max_retries=0)
def check_node(bundle: RunBundle) -> tuple[str, str | None, str | None]:
    """Pre-flight on one node: (node label, problem or ``None``, the CLI version found)."""
    problem = remote.check_node(bundle)
    version = remote.cli_version(bundle) if problem is None else None
    return node_label(), problem, version


def _say(text: str) -> None:
    """One line in this worker's log on its node (never a secret: names and numbers only)."""
    print(f"caliper-executor-ray: {text}", file=sys.stdout, flush=True)


def run_attempt(bundle: RunBundle, job: AttemptJob) -> FinishedAttempt:
    """Run ``job`` of the bundle on this node; its ``node`` names this node."""
    label = node_label()
    _say(f"attempt {job.task_name!r} #{job.number} starts on {label}")
    attempt = f"attempt {job.task_name!r} #{job.number}"

    def cancelled() -> None:  # ray.cancel: the attempt stops like Ctrl-C stops a local run
        _say(f"{attempt} cancelled; stopping it")

    finished = remote.run_job(bundle, job, node=label, on_stop=cancelled)
    if finished.record is not None or finished.fatal is not None:
        _say(f"{attempt} finished on {label}")
    return finished


attempt_task = ray.remote(num_cpus=1, max_retries=0)(run_attempt)
"""``run_attempt`` as a Ray task taking one CPU of a node, never retried by Ray (caliper's
own ``--retries`` already ran inside it)."""
