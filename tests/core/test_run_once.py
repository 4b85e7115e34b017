"""Issue 14: a run does each of these once — resolve and hash the skills, hash the spec (from
the very bytes it loaded), find the results folder. Each test counts, in-process, through
``caliper.run`` or the real command's ``main``, with the fake backend's subprocess agent."""

from __future__ import annotations

import hashlib
import sys
import textwrap

import pytest

import caliper
import caliper.results.store
import caliper.spec.load
import caliper.spec.skills
import caliper_fakeagent.plugin as fake_plugin
from caliper.cli import main
from caliper.default_plugins import assert_judge
from caliper.runner import RunOptions
from caliper_fakeagent.harness import FAKE_AGENT

SPEC = """\
    skills:
      - skills/helper
    tasks:
      - name: hello
        prompt: "fake: say hi"
        assert: "assert True"
    """


@pytest.fixture
def project(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "sandboxes").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CALIPER_TMPDIR", str(tmp_path / "sandboxes"))
    monkeypatch.setenv("FAKE_AGENT_CLI_PATH", str(FAKE_AGENT))
    monkeypatch.chdir(tmp_path)
    skill = tmp_path / "skills" / "helper"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: helper\ndescription: Helps with greetings.\n---\nSay hi.\n", encoding="utf-8"
    )
    spec = tmp_path / "demo.eval.yaml"
    spec.write_text(textwrap.dedent(SPEC), encoding="utf-8")
    return spec


def _counting(monkeypatch, module, name, *, everywhere=False):
    """The calls of ``module.name`` from now on; ``everywhere``: also through every loaded
    caliper module that imported the function by name."""
    calls = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    if everywhere:
        for loaded in [m for n, m in sys.modules.items() if n.startswith("caliper.")]:
            if vars(loaded).get(name) is real:
                monkeypatch.setattr(loaded, name, counted)
    return calls


def _run(spec):
    return caliper.run(
        spec,
        RunOptions(k=2, model="fake"),
        plugins=[fake_plugin, assert_judge],
        entry_points=False,
    )


def test_skills_are_resolved_and_hashed_once_per_run(project, monkeypatch):
    resolved = _counting(monkeypatch, caliper.spec.skills, "resolve_source")
    resolved_by_load = _counting(monkeypatch, caliper.spec.load, "resolve_source")
    hashed = _counting(monkeypatch, caliper.spec.skills, "tree_hash")
    ending = _run(project)
    assert ending.exit_code == 0, ending.problem()
    assert len(resolved) + len(resolved_by_load) == 1
    assert len(hashed) == 1
    snapshot = ending.results.meta.skill_snapshots[0]
    assert snapshot.name == "helper" and snapshot.content_hash


def test_the_spec_hash_is_of_the_bytes_that_were_loaded(project, monkeypatch):
    loaded = project.read_bytes()
    real = caliper.spec.load.load_document

    def load_then_edit(path, **kwargs):
        document = real(path, **kwargs)
        project.write_text(project.read_text() + "# edited right after it was read\n")
        return document

    monkeypatch.setattr(caliper.spec.load, "load_document", load_then_edit)
    ending = _run(project)
    assert ending.exit_code == 0, ending.problem()
    assert project.read_bytes() != loaded
    assert ending.results.meta.spec_hash == hashlib.sha256(loaded).hexdigest()


def test_caliper_run_finds_the_results_folder_once(project, monkeypatch):
    found = _counting(monkeypatch, caliper.results.store, "caliper_root", everywhere=True)
    monkeypatch.setenv("CALIPER_LOAD_PLUGINS", "fake,assert")
    code = main(["run", str(project), "--model", "fake", "--k", "1"])
    assert code == 0
    assert len(found) == 1
    assert list((project.parent / ".caliper" / "results" / "demo").glob("*.json"))
