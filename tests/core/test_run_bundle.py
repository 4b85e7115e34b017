"""The executor contract carries data: a lazily packed RunBundle per engine, a backend per
engine, a stop check; the run-level settings of a run; caliper.remote's lost job."""

from __future__ import annotations

import pickle
import textwrap
import threading

from caliper.plugin.executor import AttemptJob, RunBundle
from caliper.runner.run.options import RunOptions, RunSettings


def test_a_bundle_packs_only_when_asked_and_once() -> None:
    calls: list[int] = []

    def pack() -> bytes:
        calls.append(1)
        return b"payload"

    bundle = RunBundle("fake:model", pack, keep_workdirs=True)
    assert calls == []
    assert repr(bundle) == "RunBundle(engine='fake:model')"
    threads = [threading.Thread(target=bundle.payload) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [1]
    assert bundle.payload() == b"payload"
    assert len(bundle.id) == 24


def test_a_bundle_travels_as_its_payload() -> None:
    bundle = RunBundle("fake", lambda: b"the packed run", keep_workdirs=True)
    again = pickle.loads(pickle.dumps(bundle))
    assert isinstance(again, RunBundle)
    assert (again.engine, again.keep_workdirs, again.payload()) == (
        "fake",
        True,
        b"the packed run",
    )
    assert again.id == bundle.id


def test_run_level_settings_are_one_view_of_the_options() -> None:
    options = RunOptions(
        workers=7, executor="inline", executor_settings={"log": "x"}, max_concurrent={"a": 2}
    )
    assert options.run_level() == RunSettings(
        executor="inline", executor_settings={"log": "x"}, workers=7, max_concurrent={"a": 2}
    )
    assert RunOptions().run_level() == RunSettings()


def test_a_lost_job_is_an_infra_error_naming_what_failed() -> None:
    from caliper.remote import lost_job

    finished = lost_job(AttemptJob("t", 2), RuntimeError("node gone\nmore"), what="the Ray task")
    assert finished.record is not None
    assert finished.record.outcome.value == "infra_error"
    assert finished.record.attempt == 2
    assert finished.record.reason == (
        "the Ray task running this attempt failed: RuntimeError: node gone"
    )


def test_a_local_run_never_packs_its_bundle(tmp_path, monkeypatch) -> None:
    """The local executor runs jobs here: the spec's folder is never tarred for it."""
    import caliper
    import caliper_fakeagent.plugin as fake_plugin
    from caliper.default_plugins import assert_judge
    from caliper.runner.run import portable
    from caliper_fakeagent.harness import FAKE_AGENT

    def no_packing(*_args, **_kwargs):
        raise AssertionError("a local run packed its bundle")

    monkeypatch.setattr(portable, "pack", no_packing)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("FAKE_AGENT_CLI_PATH", str(FAKE_AGENT))
    monkeypatch.chdir(tmp_path)
    spec = tmp_path / "demo.eval.yaml"
    spec.write_text(
        textwrap.dedent("""\
        tasks:
          - name: plain
            prompt: "fake: say hi"
            assert: "assert True"
        """),
        encoding="utf-8",
    )
    ending = caliper.run(
        spec,
        RunOptions(model="fake", k=2, workers=2),
        plugins=[fake_plugin, assert_judge],
        entry_points=False,
    )
    assert ending.exit_code == 0, ending.problem()
    assert ending.results is not None
    outcomes = [a.outcome.value for a in ending.results.tasks[0].attempts]
    assert outcomes == ["pass", "pass"]
