"""Errors that reach the user as one clear message instead of a traceback."""

from __future__ import annotations


class CaliperError(Exception):
    """A problem the user can act on.

    ``message`` says what went wrong (and where); ``hint`` says what to do about it.
    ``exit_code`` is what the ``caliper`` command exits with when this error escapes.
    """

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None, exit_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code

    def render(self) -> str:
        """The message (and hint) as the CLI prints it."""
        return self.message if not self.hint else f"{self.message}\n{self.hint}"


class UsageError(CaliperError):
    """The command line asked for something that cannot be done (exit 2)."""

    exit_code = 2


class SpecError(CaliperError):
    """The spec file is invalid (exit 2)."""

    exit_code = 2


class PluginNotFound(UsageError):
    """A backend or judge name matched no installed plugin."""


class SetupError(CaliperError):
    """The agent CLI cannot run at all: missing binary, no login, bad credentials.

    Raised (or reported through an attempt's ``SETUP_ERROR`` status) so the run stops with
    one message instead of scoring every attempt as broken.
    """

    exit_code = 3
