"""The page over a spec's runs on runs the real ``caliper`` script made from saved runs
(``regrade``, ``retry``, ``review``, ``merge``, ``--resume``) with the fake agent: each run is
labelled with its kind and its parent (the words of :mod:`caliper.results.meta_labels`),
and picking one in the run picker shows its own scores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from caliper.results.meta_labels import derived_kind, derived_short, parent_label
from caliper.results.store import load_run
from caliper_fakeagent.harness import CALIPER, Workspace

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

SPEC = """\
    tasks:
      - name: alpha
        prompt: "fake: sleep 0.2\\nfake: write out.txt alpha\\nfake: say done"
        assert: "import os; assert os.path.exists('out.txt')"
      - name: beta
        prompt: "fake: sleep 0.2\\nfake: say nope"
        assert: "assert False"
      - name: gamma
        prompt: "fake: rate-limit-first 1 {counter} 0\\nfake: say ok"
        assert: "assert True"
    """
FLAGS = ("--k", "2", "--retries", "0", "--workers", "1")


def _caliper(space: Workspace, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [str(CALIPER), *args],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, f"caliper {' '.join(args)}\n{done.stderr}"
    return done


def _folder(space: Workspace) -> Path:
    return space.root / ".caliper" / "results" / "demo"


def _runs(space: Workspace) -> set[Path]:
    return set(_folder(space).glob("*.json"))


def _new_run(space: Workspace, before: set[Path]) -> Path:
    (made,) = _runs(space) - before
    return made


def _killed_then_resumed(space: Workspace, spec: Path) -> Path:
    """A run SIGKILLed once its journal holds an attempt, then ended with ``--resume``."""
    process = space.start(spec, *FLAGS)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            journals = list(_folder(space).glob("*.journal.jsonl"))
            lines = journals[0].read_text(encoding="utf-8").splitlines() if journals else []
            if any(line.startswith('{"attempt"') for line in lines[1:]):
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the journal never held an attempt")
        os.kill(process.pid, signal.SIGKILL)
        process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    done = space.run(spec, "--resume", timeout=120)
    assert done.returncode == 0, done.stderr
    return done.results_path


@pytest.fixture
def derived(tmp_path: Path) -> tuple[Workspace, dict[str, Path]]:
    """A parent run and, made from it or beside it by the real CLI, one run of each kind."""
    space = Workspace.create(tmp_path)
    spec = space.spec(SPEC.format(counter=tmp_path / "counter"))
    made: dict[str, Path] = {}
    made["parent"] = space.run(spec, *FLAGS, "--keep-workdirs").results_path
    parent = str(made["parent"])
    for kind, args in (
        ("regrade", ["regrade", parent]),
        ("retry", ["retry", parent, "--retries", "0"]),
    ):
        before = _runs(space)
        _caliper(space, *args)
        made[kind] = _new_run(space, before)
    overrides = tmp_path / "overrides.json"
    items = [{"task": "beta", "attempt": 1, "verdict": "pass", "note": "beta is fine"}]
    overrides.write_text(json.dumps({"reviewer": "ana", "overrides": items}), encoding="utf-8")
    before = _runs(space)
    _caliper(space, "review", parent, str(overrides))
    made["review"] = _new_run(space, before)
    shards = [space.run(spec, *FLAGS, "--shard", f"{i}/2").results_path for i in (1, 2)]
    before = _runs(space)
    _caliper(space, "merge", *(str(s) for s in shards))
    made["merge"] = _new_run(space, before)
    made["resume"] = _killed_then_resumed(space, spec)
    return space, made


def _shown(driver) -> list:
    return [d for d in driver.find_elements(By.CSS_SELECTOR, ".run-detail") if d.is_displayed()]


def test_derived_runs_are_labelled_with_their_parent_and_can_be_picked(derived, browser):
    space, made = derived
    page = space.root / "history.html"
    _caliper(space, "history", "demo", "--format", "html", "-o", str(page))
    browser.open(page)
    driver = browser.driver
    assert browser.console_errors() == [] and browser.alert_text() is None
    metas = {kind: load_run(path).meta for kind, path in made.items()}
    assert derived_kind(metas["regrade"]) == "regrade" and metas["resume"].resumed_at
    for kind, meta in metas.items():
        row = driver.find_element(By.CSS_SELECTOR, f'#runs tr[data-run="{meta.run_id}"]')
        tags = row.find_elements(By.CSS_SELECTOR, ".tag.derived")
        if kind == "parent":
            assert tags == [], "an ordinary run is labelled as derived"
            continue
        assert [t.text for t in tags] == [derived_short(meta)], kind
        title = tags[0].get_attribute("title")
        if kind == "resume":  # a resumed run keeps its own id and has no parent
            assert parent_label(meta) is None and not title
        else:
            assert title == f"parent: {parent_label(meta)}", kind
    parent_id = metas["parent"].run_id
    assert derived_short(metas["review"]) == f"review of {parent_id}"
    assert parent_label(metas["review"]) == f"demo/{parent_id}"

    picker = Select(driver.find_element(By.ID, "run-select"))
    for kind in ("review", "merge", "retry", "resume"):
        meta = metas[kind]
        (option,) = [o for o in picker.options if o.text.startswith(meta.run_id + " ·")]
        picker.select_by_value(option.get_attribute("value"))
        (shown,) = _shown(driver)
        assert shown.get_attribute("data-run") == meta.run_id
        note = shown.find_element(By.CSS_SELECTOR, "p.note")
        assert note.find_element(By.CSS_SELECTOR, ".tag.derived").text == derived_short(meta)
        parents = [p.text for p in note.find_elements(By.CSS_SELECTOR, ".parent")]
        assert parents == ([parent_label(meta)] if kind != "resume" else []), kind
        assert "shards" not in note.text or kind == "merge"
        # the run's own scores: passes / usable attempts, counted from its saved file
        saved = json.loads(made[kind].read_text(encoding="utf-8"))
        expected = {}
        for task in saved["tasks"]:
            outcomes = [a["outcome"] for a in task["attempts"]]
            usable = [o for o in outcomes if o in ("pass", "task_fail")]
            expected[task["name"]] = f"{outcomes.count('pass')}/{len(usable)}"
        rows = shown.find_elements(By.CSS_SELECTOR, "tbody tr")
        cells = {r.find_elements(By.TAG_NAME, "td")[0].text: r for r in rows}
        got = {name: r.find_elements(By.TAG_NAME, "td")[2].text for name, r in cells.items()}
        assert got == expected, kind
        browser.screenshot(f"history-derived-{kind}")
    # the review set beta's first attempt to pass: 1/2 there, 0/2 in its parent
    assert expected_review(made["review"]) == "1/2" and expected_review(made["parent"]) == "0/2"
    assert browser.console_errors() == [] and browser.alert_text() is None


def expected_review(path: Path) -> str:
    """``passes/usable`` of task beta in the saved run ``path``."""
    (beta,) = [
        t for t in json.loads(path.read_text(encoding="utf-8"))["tasks"] if t["name"] == "beta"
    ]
    outcomes = [a["outcome"] for a in beta["attempts"]]
    return f"{outcomes.count('pass')}/{len(outcomes)}"
