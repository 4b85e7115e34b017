"""The stop messages of a run reach the user even when the signal lands inside a write."""

from __future__ import annotations

import os
import signal
import threading
import time

from caliper.runner.run.control import RunController
from caliper.system import process


def test_a_stop_message_is_written_when_the_signal_lands_inside_a_write_to_the_same_stream():
    """The main thread is blocked writing to a full pipe when Ctrl-C arrives; the handler's
    message goes to the same stream and must still come out, after that write."""
    read_fd, write_fd = os.pipe()
    stream = open(write_fd, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    controller = RunController(notify=lambda text: print(text, file=stream, flush=True))
    received: list[bytes] = []

    def interrupt_then_read() -> None:
        time.sleep(0.3)  # the main thread is blocked in its write by now (the pipe is full)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.3)
        with open(read_fd, "rb") as pipe:
            received.append(pipe.read())

    controller.install_signals()
    reader = threading.Thread(target=interrupt_then_read)
    try:
        reader.start()
        stream.write("x" * 1_000_000 + "\n")
        stream.flush()
    finally:
        controller.restore_signals()
        stream.close()
        reader.join(timeout=10)
        process.reset_stop()
    text = received[0].decode()
    assert controller.killed
    assert text.startswith("x" * 1_000_000 + "\n"), "the blocked write was cut"
    assert "Stopping (Ctrl-C): ending the running attempts" in text[1_000_000:]


def test_stop_messages_keep_their_order_and_are_all_written_by_the_end():
    lines: list[str] = []
    controller = RunController(notify=lines.append)
    controller.install_signals()
    try:
        with controller.cleaning("tidy up", 30):
            os.kill(os.getpid(), signal.SIGINT)
            with controller.cleaning("second", 10):
                pass
    finally:
        controller.restore_signals()
        process.reset_stop()
    assert [line.split(":")[0] for line in lines] == ["Stopping (Ctrl-C)", "Stopping", "Stopping"]
    assert "'tidy up' (up to 30 s)" in lines[1]
    assert "'second' (up to 10 s)" in lines[2]
