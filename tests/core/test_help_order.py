"""Every command's --help has its sections in one order: Options (and Commands) first, then
the examples, then the exit codes."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from caliper.cli import COMMANDS, cli

ORDER = ["Options", "Commands", "Typical session", "Examples", "Example", "Exit codes"]
_TITLE = re.compile(r"^ *(" + "|".join(ORDER) + r"):$", re.M)


def _sections(args: list[str]) -> list[str]:
    result = CliRunner().invoke(cli, [*args, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    return _TITLE.findall(result.output)


@pytest.mark.parametrize(
    "args", [[], *([name] for name in COMMANDS), ["import", "skill-creator"]], ids=" ".join
)
def test_help_sections_come_in_one_order(args):
    sections = _sections(args)
    assert "Options" in sections
    assert sections == sorted(sections, key=ORDER.index), sections
