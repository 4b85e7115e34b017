"""Assembling a run's results: a pure function from what the run has to :class:`RunResults`.

Input: the run's metadata (:class:`RunMeta`), its spec and k, every attempt in stored form
(the plan's carried attempts and the finished ones, as the journal holds them), the tasks
``--fail-fast`` aborted and why ``--k auto`` stopped each task. Output: the results file's
text and the :class:`RunResults` read back from it, so what is returned is exactly what is
saved. No file is read or written here: :mod:`.journaling` does the I/O around it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from caliper.results import codec
from caliper.results.journal import assemble
from caliper.results.models import TaskResult

if TYPE_CHECKING:
    from caliper.results.models import RunMeta, RunResults
    from caliper.spec.model import Spec


@attrs.frozen
class AssembledRun:
    """A run's results file (``text``, as saved) and the results it holds."""

    text: str
    results: RunResults


def task_entries(spec: Spec, k: int) -> list[dict[str, Any]]:
    """Each task of ``spec``, without attempts, in the stored form of the results file."""
    return [
        codec.converter().unstructure(
            TaskResult(
                name=task.name,
                index=task.index,
                k=k,
                activation_expected=task.activates,
                check_keys=list(task.checks),
            )
        )
        for task in spec.tasks
    ]


def assemble_results(
    meta: RunMeta,
    spec: Spec,
    k: int,
    attempts: Sequence[dict[str, Any]],
    *,
    aborted: Iterable[str] = (),
    task_stop_reasons: Mapping[str, str] | None = None,
) -> AssembledRun:
    """The results of a run with ``meta`` whose attempts (stored form) are ``attempts``.

    Attempts are sorted into their tasks by number; a task in ``aborted`` is marked so;
    ``task_stop_reasons`` says why an adaptive task stopped.
    """
    data = assemble(
        codec.converter().unstructure(meta),
        task_entries(spec, k),
        list(attempts),
        set(aborted),
        dict(task_stop_reasons) if task_stop_reasons is not None else None,
    )
    text = codec.dumps_data(data)
    return AssembledRun(text=text, results=codec.from_data(json.loads(text)))
