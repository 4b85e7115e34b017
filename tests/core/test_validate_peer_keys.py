"""Spec keys of the earlier tool (caliper-eval 0.x) this format does not take get a migration
hint from ``caliper validate`` (through the real script), never a bare "unknown key"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CALIPER = Path(sys.executable).parent / "caliper"

CASES = {
    "top-baseline": (
        "baseline: true\ntasks:\n  - name: t\n    prompt: p\n    assert: 'assert True'\n",
        ["1:1", "`baseline:` is not a spec key", "caliper run SPEC --baseline"],
    ),
    "top-judge-model": (
        "judge_model: x\ntasks:\n  - name: t\n    prompt: p\n    assert: 'assert True'\n",
        ["1:1", "--judge-model"],
    ),
    "task-id": (
        "tasks:\n  - id: task-001\n    name: t\n    prompt: p\n    assert: 'assert True'\n",
        ["2:5", "tasks[0].id", "identified by its `name:`"],
    ),
    "task-task-id": (
        "tasks:\n  - name: t\n    task_id: 1\n    prompt: p\n    assert: 'assert True'\n",
        ["3:5", "`task_id:`"],
    ),
    "task-model": (
        "tasks:\n  - name: t\n    model: gpt-5\n    prompt: p\n    assert: 'assert True'\n",
        ["3:5", "the engine is not part of a spec", "--model"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_old_keys_get_a_migration_hint(tmp_path, case):
    text, wanted = CASES[case]
    spec = tmp_path / f"{case}.eval.yaml"
    spec.write_text(text, encoding="utf-8")
    out = subprocess.run(
        [str(CALIPER), "validate", str(spec)], capture_output=True, text=True, check=False
    )
    shown = out.stdout + out.stderr
    assert out.returncode == 2, shown
    for piece in wanted:
        assert piece in shown, shown
    assert "unknown key" not in shown and "unknown task key" not in shown
    assert "Traceback" not in shown
