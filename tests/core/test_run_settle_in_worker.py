"""The ``local`` executor's workers settle their own finished attempts: the scheduler's policy
(``--fail-fast``, ``--max-cost``, a stop) runs on the worker thread, under the scheduler's
lock, before the next job is handed out; the journal events stay on the scheduler's thread,
in the order the attempts were settled."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from caliper.default_plugins.local_executor import LocalSession
from caliper.plugin.attempt import Usage
from caliper.plugin.executor import AttemptJob, FinishedAttempt, RunWork
from caliper.results.models import AttemptRecord, Outcome
from caliper.runner.run.control import RunController
from caliper.runner.run.schedule import Events, schedule


class Agent:
    """``run_here`` of a fake run: each job's outcome from ``outcome_of``, cost ``cost``;
    records which jobs ran, on which thread."""

    def __init__(self, outcome_of=lambda job: Outcome.PASS, cost=None, during=None):
        self.outcome_of = outcome_of
        self.cost = cost
        self.during = during or (lambda job: None)
        self.ran: list[tuple[str, int]] = []
        self.threads: set[int] = set()

    def __call__(self, job: AttemptJob) -> FinishedAttempt:
        self.ran.append((job.task_name, job.number))
        self.threads.add(threading.get_ident())
        self.during(job)
        usage = None if self.cost is None else Usage(cost_usd=self.cost)
        record = AttemptRecord(
            task_name=job.task_name, attempt=job.number, outcome=self.outcome_of(job), usage=usage
        )
        return FinishedAttempt(job=job, record=record)


def _runs(tasks, k, fail_fast=0):
    return {
        "": SimpleNamespace(
            spec=SimpleNamespace(tasks=[SimpleNamespace(name=name) for name in tasks]),
            options=SimpleNamespace(k=k, fail_fast=fail_fast),
            engine=SimpleNamespace(backend_id="a"),
        )
    }


def _session(agent: Agent, workers: int) -> LocalSession:
    work = RunWork(
        bundles={},
        backend_of={"": "a"},
        run_here=agent,
        stop_requested=lambda: False,
        workers=workers,
    )
    return LocalSession(work)


def _jobs(tasks, k):
    return [AttemptJob(name, n, "", "a") for name in tasks for n in range(1, k + 1)]


def _schedule(agent, tasks, k, *, workers=1, fail_fast=0, budget=None, controller=None):
    session = _session(agent, workers)
    reported: list[tuple[str, int]] = []
    aborted: list[str] = []
    events = Events(
        attempt_done=lambda f: reported.append((f.job.task_name, f.job.number)),
        task_aborted=lambda f: aborted.append(f.job.task_name),
    )
    try:
        execution = schedule(
            _runs(tasks, k, fail_fast),
            session,
            _jobs(tasks, k),
            controller=controller or RunController(),
            workers=workers,
            events=events,
            budget=budget,
        )
    finally:
        session.close()
    return execution, reported, aborted


def test_a_fail_fast_trip_withholds_the_next_job_of_its_task_at_one_worker():
    agent = Agent(lambda job: Outcome.INFRA_ERROR if job.task_name == "a" else Outcome.PASS)
    execution, reported, aborted = _schedule(agent, ["a", "b"], 4, fail_fast=2)
    # a#3 was next in line when a#2 tripped --fail-fast: it never ran, b's jobs did
    assert agent.ran == [("a", 1), ("a", 2), ("b", 1), ("b", 2), ("b", 3), ("b", 4)]
    assert reported == agent.ran
    assert aborted == ["a"]
    assert execution.aborted[""] == {"a"}
    assert threading.get_ident() not in agent.threads


def test_the_budget_reached_by_an_attempt_withholds_every_later_job():
    agent = Agent(cost=0.4)
    execution, reported, _ = _schedule(agent, ["a", "b"], 3, budget=1.0)
    assert agent.ran == [("a", 1), ("a", 2), ("a", 3)]  # 1.2 >= 1.0 after the third
    assert reported == agent.ran
    assert execution.budget_stop is not None


def test_a_stop_requested_during_an_attempt_withholds_the_next_job():
    controller = RunController()

    def during(job):
        if job.number == 2:
            controller.request_stop("stopped: test", kill=False)

    agent = Agent(during=during)
    execution, reported, _ = _schedule(agent, ["a"], 5, controller=controller)
    assert agent.ran == [("a", 1), ("a", 2)]
    assert reported == agent.ran  # the attempt running when the stop came is kept
    assert execution.stop_reason == "stopped: test"


def test_reports_come_in_the_order_attempts_were_settled_at_two_workers():
    agent = Agent()
    settled: list[tuple[str, int]] = []
    session = _session(agent, 2)
    lock = threading.RLock()
    on_worker: list[bool] = []

    def settle(finished):
        on_worker.append(threading.current_thread() is not threading.main_thread())
        settled.append((finished.job.task_name, finished.job.number))
        if finished.job.number + 2 <= 40:
            session.submit(AttemptJob("a", finished.job.number + 2, "", "a"))

    assert session.settle_where_finished(settle, lock)
    returned = []
    try:
        with lock:
            session.submit(AttemptJob("a", 1, "", "a"))
            session.submit(AttemptJob("a", 2, "", "a"))
        while session.in_flight():
            finished = session.next_finished(1.0)
            if finished is not None:
                returned.append((finished.job.task_name, finished.job.number))
    finally:
        session.close()
    assert len(returned) == 40
    assert returned == settled
    assert all(on_worker)


def test_an_error_while_settling_surfaces_in_the_scheduler_instead_of_a_hang():
    session = _session(Agent(), 1)

    def settle(finished):
        raise RuntimeError("a bug in the policy")

    session.settle_where_finished(settle, threading.RLock())
    try:
        session.submit(AttemptJob("a", 1, "", "a"))
        with pytest.raises(RuntimeError, match="a bug in the policy"):
            while session.in_flight():
                session.next_finished(1.0)
    finally:
        session.close()


def test_closing_while_a_worker_settles_and_submits_does_not_hang():
    session = _session(Agent(), 1)
    lock = threading.RLock()
    go, settling = threading.Event(), threading.Event()
    submitted = [1, 2]

    def settle(finished):
        number = finished.job.number
        if number == 1:
            settling.set()
            go.wait(10)
        if number < 4:
            try:
                session.submit(AttemptJob("a", number + 2, "", "a"))
                submitted.append(number + 2)
            except RuntimeError:  # the session is closing: no more jobs
                pass

    session.settle_where_finished(settle, lock)
    with lock:
        session.submit(AttemptJob("a", 1, "", "a"))
        session.submit(AttemptJob("a", 2, "", "a"))  # queued behind 1 on the one worker
    assert settling.wait(10)
    closer = threading.Thread(target=session.close, daemon=True)
    closer.start()
    closer.join(0.2)  # the close is under way (waiting for the lock) while 1 still settles
    go.set()
    closer.join(10)
    assert not closer.is_alive(), "closing deadlocked with a worker submitting"
    handed_back = []
    while session.in_flight():
        finished = session.next_finished(1.0)
        assert finished is not None
        handed_back.append(finished.job.number)
    assert sorted(handed_back) == sorted(submitted)  # each job exactly once, run or cancelled
