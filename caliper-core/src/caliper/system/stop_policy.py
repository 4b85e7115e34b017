"""The one stop policy of the ``caliper`` process: Ctrl-C, ``SIGTERM`` and ``SIGHUP`` mean
stop, save what is finished, and exit 128 + the signal's number (130, 143, 129).

The console script installs it (:func:`install`) as its first step, before any heavy import,
so it holds from the process's first instruction to its last:

* before the command starts (:func:`begin`), a signal is only recorded; :func:`begin` then
  raises :class:`StopSignal` at once, so a Ctrl-C during start-up is a clean exit 130 and
  never a traceback;
* while a command runs, a signal raises :class:`StopSignal` (a ``KeyboardInterrupt``) where
  the command is, so every ``finally`` and ``except KeyboardInterrupt`` that saves finished
  work runs; a run swaps in its own handler (:class:`caliper.runner.run.control.RunController`),
  which stops the attempts and saves the partial run, and reports each stop here
  (:func:`note`), so the command can check between steps (:func:`check`) and never carries
  on after a stop;
* after the command ended (:func:`end`), a signal is only recorded: the exit code is decided.

A signal ignored by whoever started caliper (``nohup`` ignores ``SIGHUP``) stays ignored.
This module imports only the interpreter's built-in ``_signal`` (the ``signal`` module would
first import ``enum``, which makes the unguarded start of the process longer).
"""

from __future__ import annotations

import _signal as signal

HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
NAMES = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}

_STARTING, _RUNNING, _ENDED = "starting", "running", "ended"


class StopSignal(KeyboardInterrupt):
    """A stop signal arrived; ``signum`` is which (``exit_code``: 128 + its number)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """128 + the signal's number: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP."""
        return 128 + self.signum

    @property
    def label(self) -> str:
        """How the signal is named to the user."""
        return NAMES.get(self.signum, f"signal {self.signum}")


class _State:
    phase = _STARTING
    installed = False
    received: int | None = None
    """The first stop signal of the process (recorded by the handler or by :func:`note`)."""


def _handler(signum: int, _frame: object) -> None:
    if _State.received is None:
        _State.received = signum
    if _State.phase == _RUNNING:
        raise StopSignal(signum)


def install() -> None:
    """Route SIGINT, SIGTERM and SIGHUP to the policy (those not ignored at start)."""
    for signum in HANDLED_SIGNALS:
        if signal.getsignal(signum) is signal.SIG_IGN:
            continue
        signal.signal(signum, _handler)
    _State.installed = True


def installed() -> bool:
    """Whether this process runs under the policy (the console script installed it)."""
    return _State.installed


def begin() -> None:
    """The command starts: from now on a signal raises :class:`StopSignal`; one that came
    during start-up raises it now."""
    _State.phase = _RUNNING
    check()


def end() -> None:
    """The command ended: later signals are only recorded."""
    _State.phase = _ENDED


def note(signum: int) -> None:
    """Record a stop signal that a run's own handler received (in a process under the
    policy; a program that calls caliper in-process keeps no record)."""
    if _State.installed and _State.received is None:
        _State.received = signum


def received() -> int | None:
    """The first stop signal this process received, if any."""
    return _State.received


def check() -> None:
    """Raise :class:`StopSignal` when a stop signal was received (a command calls it between
    steps, so nothing is done or written after a stop)."""
    if _State.installed and _State.received is not None:
        raise StopSignal(_State.received)
