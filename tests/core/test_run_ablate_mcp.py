"""``--ablate`` also removes declared ``mcp:`` servers, through the real ``caliper`` script
(fake backend): qualified and bare names, the ambiguity error, what the run records, and how
``compare`` titles the pair."""

from __future__ import annotations

import json
import subprocess

from caliper_fakeagent.harness import CALIPER, Workspace

SPEC = """\
    skills:
      - ./skills/weather
    mcp:
      weather:
        command: python3
        args: [weather.py]
      notes:
        command: python3
        args: [notes.py]
    tasks:
      - name: shows its servers
        prompt: |
          fake: mcp
        assert: "assert True"
    """


def _space(tmp_path) -> Workspace:
    space = Workspace.create(tmp_path)
    space.skill("weather")
    return space


def _servers(run) -> list[str]:
    (attempt,) = run.attempts("shows its servers")
    answer = attempt["final_answer"]
    return [] if answer == "no MCP config" else sorted(json.loads(answer))


def test_a_bare_name_shared_by_a_skill_and_a_server_is_refused_listing_both(tmp_path):
    space = _space(tmp_path)
    run = space.run(space.spec(SPEC), "--k", "1", "--ablate", "weather")
    assert run.returncode == 2, run.stderr
    assert "both a skill and an mcp: server" in run.stderr
    assert "skill:weather" in run.stderr and "mcp:weather" in run.stderr
    assert "Traceback" not in run.stderr
    assert run.results_path is None  # refused before any attempt


def test_an_unknown_name_lists_skills_and_servers(tmp_path):
    space = _space(tmp_path)
    run = space.run(space.spec(SPEC), "--k", "1", "--ablate", "note")
    assert run.returncode == 2
    assert "Did you mean 'notes'?" in run.stderr
    assert "Declared mcp: servers: weather, notes." in run.stderr
    run = space.run(space.spec(SPEC), "--k", "1", "--ablate", "mcp:nowhere")
    assert run.returncode == 2 and "declares no mcp: server" in run.stderr


def test_ablated_servers_are_not_given_to_the_agent_and_are_recorded(tmp_path):
    space = _space(tmp_path)
    spec = space.spec(SPEC)
    full = space.run(spec, "--k", "1")
    assert full.returncode == 0, full.stderr
    assert _servers(full) == ["notes", "weather"]

    qualified = space.run(spec, "--k", "1", "--ablate", "mcp:weather")
    assert qualified.returncode == 0, qualified.stderr
    assert _servers(qualified) == ["notes"]
    meta = qualified.results["meta"]
    assert meta["ablated_mcp"] == ["weather"]
    assert meta["ablated"] == []  # the skill of the same name stays installed
    assert [s["ablated"] for s in meta["skill_snapshots"]] == [False]

    bare = space.run(spec, "--k", "1", "--ablate", "notes", "--ablate", "skill:weather")
    assert bare.returncode == 0, bare.stderr
    assert _servers(bare) == ["weather"]
    assert bare.results["meta"]["ablated_mcp"] == ["notes"]
    assert bare.results["meta"]["ablated"] == ["weather"]

    both = space.run(spec, "--k", "1", "--ablate", "mcp:weather", "--ablate", "notes")
    assert _servers(both) == []  # no server left: no MCP config at all

    out = subprocess.run(
        [str(CALIPER), "compare", str(qualified.results_path), str(full.results_path)],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "without mcp:weather → full neighbourhood" in out.stdout
    assert "mcp:weather adds" in out.stdout


def test_old_results_without_ablated_mcp_still_load(tmp_path):
    from caliper.results.codec import from_data

    results = from_data(
        {"meta": {"run_id": "r", "spec_name": "s", "spec_path": "s.eval.yaml",
                  "started_at": "2026-01-01T00:00:00+00:00"}, "tasks": []}
    )  # fmt: skip
    assert results.meta.ablated_mcp == []
