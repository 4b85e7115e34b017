"""``caliper tune`` refuses what cannot work before spending an attempt, and writes SKILL.md
through the one output writer: a byte-order mark is kept, a read-only SKILL.md and a ``--k``
at which no candidate could ever be accepted are exit 2 with nothing run, a full disk is exit
74 with the original intact. The smallest reachable p-value is checked against a brute-force
enumeration of the permutation test, independent of the tuner's convolution."""

from __future__ import annotations

import errno
import itertools
import json
import os
import subprocess
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import pytest

from caliper.errors import CaliperError
from caliper.tune.description import replace_description
from caliper.tune.loop import smallest_reachable_p
from caliper_fakeagent.harness import CALIPER, FAKE_AGENT, Workspace

SKILL = "invoice-totals"
LOAD = f"fake: load {SKILL}"


# -- the smallest reachable p, against an independent enumeration ------------------------------


def _permutation_p(data: list[tuple[int, int]], k: int) -> Fraction:
    """The one-sided p of "after is better" by listing every relabelling: within each probe
    the 2k attempts' outcomes are pooled and every choice of which k are "after" is equally
    likely; the statistic is the sum over probes of (after − before) successes."""
    observed = sum(xb - xa for xa, xb in data)
    per_probe = []
    for xa, xb in data:
        pooled = [1] * (xa + xb) + [0] * (2 * k - xa - xb)
        stats = [
            2 * sum(pooled[i] for i in after) - (xa + xb)
            for after in itertools.combinations(range(2 * k), k)
        ]
        per_probe.append(stats)
    total = hits = 0
    for combo in itertools.product(*per_probe):
        total += 1
        hits += sum(combo) >= observed
    return Fraction(hits, total)


def _enumerated_minimum(probes: int, k: int) -> Fraction:
    outcomes = list(itertools.product(range(k + 1), repeat=2))
    return min(_permutation_p(list(data), k) for data in itertools.product(outcomes, repeat=probes))


@pytest.mark.parametrize(("probes", "k"), [(1, 1), (2, 1), (3, 1), (4, 1), (1, 2), (2, 2), (1, 3)])
def test_smallest_reachable_p_matches_an_enumeration(probes: int, k: int) -> None:
    expected = _enumerated_minimum(probes, k)
    assert smallest_reachable_p(probes, k) == pytest.approx(float(expected), rel=1e-9)


def test_the_issue_case_k1_three_train_probes_is_one_eighth() -> None:
    assert smallest_reachable_p(3, 1) == pytest.approx(1 / 8)


# -- through the real script -------------------------------------------------------------------


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    if not FAKE_AGENT.exists():
        pytest.skip(f"the fake agent is not installed at {FAKE_AGENT}")
    space = Workspace.create(tmp_path)
    (tmp_path / ".caliper").mkdir()
    space.skill(SKILL, "Totals invoices")
    return space


def _probes(space: Workspace, per_kind: int) -> Path:
    items = [{"query": f"{LOAD}\nfake: say {i}", "should_trigger": True} for i in range(per_kind)]
    items += [{"query": f"fake: say no {i}", "should_trigger": False} for i in range(per_kind)]
    path = space.root / "trigger-eval.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def tune(space: Workspace, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CALIPER), "tune", str(space.root / "skills" / SKILL), "--model", "fake", *args],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _nothing_ran(space: Workspace) -> bool:
    caliper = space.root / ".caliper"
    return not (caliper / "results").exists() and not (caliper / "tune").exists()


def test_k1_with_four_train_probes_is_refused_before_any_attempt(space: Workspace) -> None:
    """6 probes split 4 train / 2 test: at --k 1 the best p is 1/16 > 0.05. --k 2 (1/1296)
    or 5 train probes (1/32) would do."""
    done = tune(space, "--probes", str(_probes(space, 3)), "--k", "1")
    assert done.returncode == 2, done.stderr
    assert "No candidate could ever be accepted" in done.stderr
    assert "with 4 train probes at --k 1" in done.stderr and "0.0625" in done.stderr
    assert "--k 2 or at least 5 train probes at --k 1" in done.stderr
    assert "Traceback" not in done.stderr
    assert _nothing_ran(space)


def test_a_read_only_skill_md_is_refused_before_any_attempt(space: Workspace) -> None:
    skill_file = space.root / "skills" / SKILL / "SKILL.md"
    os.chmod(skill_file, 0o444)
    done = tune(space, "--probes", str(_probes(space, 3)), "--k", "2", "--write")
    assert done.returncode == 2, done.stderr
    assert "read-only" in done.stderr and str(skill_file) in done.stderr
    assert "Traceback" not in done.stderr
    assert _nothing_ran(space)


def test_a_skill_md_with_a_byte_order_mark_is_tuned(space: Workspace) -> None:
    skill_file = space.root / "skills" / SKILL / "SKILL.md"
    original = b"\xef\xbb\xbf" + skill_file.read_bytes()
    skill_file.write_bytes(original)
    done = tune(space, "--probes", str(_probes(space, 3)), "--k", "2", "--write")
    assert done.returncode == 0, done.stderr
    assert "FrontmatterEditError" not in done.stderr
    assert skill_file.read_bytes() == original  # nothing won: left byte for byte
    copies = list(
        (space.root / ".caliper" / "tune" / SKILL).glob("*/candidates/c0/*/skill/*/SKILL.md")
    )
    assert copies and all(c.read_bytes().startswith(b"\xef\xbb\xbf---") for c in copies)


def test_replace_description_keeps_a_byte_order_mark() -> None:
    text = "\ufeff---\nname: mine\ndescription: Old\n---\nBody\n"
    assert (
        replace_description(text, "New") == '\ufeff---\nname: mine\ndescription: "New"\n---\nBody\n'
    )


# -- --write on a full disk ---------------------------------------------------------------------


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_write_on_a_full_disk_keeps_skill_md_and_says_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    from caliper.commands.tune import _apply

    folder = tmp_path / SKILL
    folder.mkdir()
    skill_file = folder / "SKILL.md"
    original = "---\nname: invoice-totals\ndescription: Old\n---\n" + "body\n" * 2000
    skill_file.write_text(original, encoding="utf-8")
    outcome = SimpleNamespace(winner=SimpleNamespace(id="c1", description="New and better"))
    real_write = os.write

    def full(fd: int, data) -> int:
        if fd > 2:
            real_write(fd, bytes(data[:4096]))  # the first block lands, then the disk is full
            raise OSError(code, os.strerror(code))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(CaliperError) as raised:
        _apply(outcome, skill_file, True, tmp_path / "session")
    monkeypatch.undo()
    assert raised.value.exit_code == 74
    message = raised.value.message
    assert "no space left" in message and "intact" in message and str(skill_file) in message
    assert "\n" not in message
    assert skill_file.read_text(encoding="utf-8") == original
    assert [p.name for p in folder.iterdir()] == ["SKILL.md"]
