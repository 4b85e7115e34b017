"""Reading commands decode a summary of a run: every field but the transcripts (issue 20).

``report``, ``list`` and ``compare`` never look at turns, so they read results with
``transcripts=False``; everything else they see is exactly what a full read gives."""

from __future__ import annotations

import attrs

from caliper.results.store import load_run
from caliper_fakeagent.harness import Workspace


def test_a_summary_is_the_full_run_without_its_transcripts(tmp_path):
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: works
            prompt: |
              fake: bash echo hi > out.txt
              fake: say I wrote out.txt
            assert: "assert open('out.txt').read().strip() == 'hi'"
          - name: fails
            prompt: "fake: say nothing done"
            assert: "assert False, 'nothing there'"
        """)
    run = space.run(spec, "--k", "2")
    assert run.returncode == 0, run.stderr
    before = run.results_path.read_bytes()
    full = load_run(run.results_path)
    summary = load_run(run.results_path, transcripts=False)
    assert run.results_path.read_bytes() == before  # reading never rewrites the file
    full_attempts = [a for t in full.tasks for a in t.attempts]
    summary_attempts = [a for t in summary.tasks for a in t.attempts]
    assert all(a.transcript for a in full_attempts)  # there was something to leave out
    assert all(a.transcript is None for a in summary_attempts)
    assert summary_attempts == [attrs.evolve(a, transcript=None) for a in full_attempts]
    assert summary.meta == full.meta
    assert [attrs.evolve(t, attempts=[]) for t in summary.tasks] == [
        attrs.evolve(t, attempts=[]) for t in full.tasks
    ]


def test_report_json_is_the_same_from_a_summary(tmp_path):
    from caliper.results.scoring import score_run, scores_data

    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: works
            prompt: "fake: say done"
            assert: "assert True"
        """)
    run = space.run(spec, "--k", "3")
    full = load_run(run.results_path)
    summary = load_run(run.results_path, transcripts=False)
    assert scores_data(score_run(summary)) == scores_data(score_run(full))
