"""The option decorators shared by the commands (attempt_options, output_options): each flag
repeated across run, tune, retry, regrade, report and compare is declared once, the same way."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from caliper.cli import cli

SHARED = {
    "--judge-model": ("run", "regrade"),
    "--judge-timeout": ("run", "regrade"),
    "--retries": ("run", "retry"),
    "--force": ("run", "retry"),
    "--workers": ("run", "tune", "retry"),
    "--output": ("run", "retry", "regrade"),
    "--verbose": ("run", "retry", "regrade", "report"),
    "--format": ("report", "compare"),
    "--matrix": ("report", "compare"),
}


def _option(command: str, flag: str) -> click.Option:
    ctx = click.Context(cli)
    found = cli.get_command(ctx, command)
    assert found is not None
    return next(p for p in found.params if isinstance(p, click.Option) and flag in p.opts)


@pytest.mark.parametrize("flag", sorted(SHARED))
def test_a_shared_flag_is_declared_alike(flag: str) -> None:
    """Every command's flag has the same names, type, metavar and parameter name."""
    options = [_option(command, flag) for command in SHARED[flag]]
    first = options[0]
    for option in options[1:]:
        assert set(option.opts) == set(first.opts)
        assert type(option.type) is type(first.type)
        assert option.metavar == first.metavar
        assert option.name == first.name
        assert option.is_flag == first.is_flag


def test_retry_workers_default_is_the_parent_runs() -> None:
    """``retry --workers`` has no default of its own (the parent run's count is used)."""
    option = _option("retry", "--workers")
    assert option.default is None and not option.show_default


def test_regrade_judge_timeout_must_be_finite() -> None:
    """``regrade --judge-timeout`` takes seconds as ``run`` does: ``inf`` is a usage error."""
    result = CliRunner().invoke(cli, ["regrade", "RUN", "--judge-timeout", "inf"])
    assert result.exit_code == 2
    assert "finite number of seconds" in result.output
