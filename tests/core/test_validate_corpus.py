"""The bad-spec corpus and the good specs, run through the real `caliper validate` command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "tests" / "specs"
BAD = SPECS / "bad"
GOOD = SPECS / "good"
CALIPER = Path(sys.executable).parent / "caliper"
EXPECTED: dict[str, list[str]] = yaml.safe_load((BAD / "expected.yaml").read_text())
BAD_SPECS = sorted(p.name for p in BAD.glob("*.eval.yaml"))
GOOD_SPECS = sorted(p.name for p in GOOD.glob("*.eval.yaml"))


def validate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CALIPER), "validate", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def test_corpus_is_big_enough_and_fully_described() -> None:
    assert len(BAD_SPECS) >= 30
    assert sorted(EXPECTED) == BAD_SPECS


@pytest.mark.parametrize("name", BAD_SPECS)
def test_bad_spec_is_rejected_with_its_message(name: str) -> None:
    done = validate(f"tests/specs/bad/{name}")
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output
    for expected in EXPECTED[name]:
        assert expected in output, f"{expected!r} not in:\n{output}"


@pytest.mark.parametrize("name", GOOD_SPECS)
def test_good_spec_is_valid(name: str) -> None:
    done = validate(f"tests/specs/good/{name}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "valid" in done.stdout
    assert "warning" not in done.stdout
