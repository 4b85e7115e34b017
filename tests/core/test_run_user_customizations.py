"""``--user-customizations`` / ``user_customizations:`` in the core, through the real script
(fake backend, which cannot load a user's setup): the spec key is checked, the flag wins over
the key, a backend that cannot honour it refuses before any attempt, and compare warns."""

from __future__ import annotations

from caliper.results.compare import meta_warnings
from caliper.results.models import RunMeta
from caliper_fakeagent.harness import Workspace

TASK = """\
    tasks:
      - name: t
        prompt: "fake: say hi"
        assert: "assert True"
    """


def test_the_spec_key_must_be_a_boolean(tmp_path):
    space = Workspace.create(tmp_path)
    spec = space.spec("user_customizations: sometimes\n" + TASK.replace("    ", "", 1))
    run = space.run(spec, "--k", "1")
    assert run.returncode == 2
    assert "user_customizations: expected true or false, found a string" in run.stderr


def test_a_backend_that_cannot_load_a_user_setup_refuses_it(tmp_path):
    space = Workspace.create(tmp_path)
    plain = space.spec(TASK)
    run = space.run(plain, "--k", "1", "--user-customizations")
    assert run.returncode == 2, run.stderr
    assert "cannot load your own setup" in run.stderr and "Traceback" not in run.stderr
    assert run.results_path is None
    keyed = space.spec("user_customizations: true\n" + TASK.replace("    ", "", 1), name="keyed")
    assert space.run(keyed, "--k", "1").returncode == 2
    # the flag wins over the key, and off is the default
    off = space.run(keyed, "--k", "1", "--no-user-customizations")
    assert off.returncode == 0, off.stderr
    assert off.results["meta"]["user_customizations"] is False
    assert off.results["meta"]["user_setup"] == {}


def _meta(backend: str, on: bool, skills: list[str]) -> RunMeta:
    setup = {"skills": skills} if on else {}
    return RunMeta(
        run_id="r", spec_name="s", spec_path="s.eval.yaml", started_at="2026-01-01T00:00:00Z",
        backend=backend, user_customizations=on, user_setup=setup,
    )  # fmt: skip


def test_compare_warns_about_different_or_cross_backend_user_setups():
    same = meta_warnings(_meta("claude-code", False, []), _meta("claude-code", False, []))
    assert not [w for w in same if "setup" in w]
    differ = meta_warnings(_meta("claude-code", False, []), _meta("claude-code", True, ["n"]))
    assert "different user setups loaded: none (isolated) → skills n" in differ
    cross = meta_warnings(_meta("claude-code", True, ["n"]), _meta("codex", True, ["n"]))
    assert any(w.startswith("backends compared with your own setup loaded") for w in cross)
    assert not any(w.startswith("different user setups") for w in cross)
