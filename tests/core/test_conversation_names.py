"""Plugins written against the former names of the planted-conversation capability keep
working, warned: ``AttemptRequest.history``, ``Backend.supports_history`` and
``Backend.history_refusal``, and the module path ``caliper.spec.history``."""

from __future__ import annotations

import importlib
import sys
import warnings
from pathlib import Path

import pytest

from caliper.plugin.attempt import AttemptRequest, AttemptSandbox
from caliper.plugin.backend import Backend
from caliper.plugin.conversation import PlantedConversation, UserTurn


class Plain(Backend):
    id = "plain"
    cli_name = "plain"


def _conversation() -> PlantedConversation:
    return PlantedConversation(
        path=Path("/spec/history.yaml"),
        declared_as="history.yaml",
        sha256="0" * 64,
        turns=(UserTurn("hi"),),
    )


def _request(conversation: PlantedConversation | None) -> AttemptRequest:
    sandbox = AttemptSandbox(
        root=Path("/s"),
        home=Path("/s/home"),
        workdir=Path("/s/work"),
        private=Path("/s/private"),
        real_home=Path("/home/user"),
        base_env={},
    )
    return AttemptRequest(
        prompt="go on", model=None, sandbox=sandbox, timeout=1.0, conversation=conversation
    )


def test_attempt_request_history_reads_the_conversation_and_warns() -> None:
    conversation = _conversation()
    request = _request(conversation)
    with pytest.warns(DeprecationWarning, match=r"AttemptRequest\.conversation") as caught:
        assert request.history is conversation
    assert caught[0].filename == __file__  # points at the plugin's read
    with pytest.warns(DeprecationWarning):
        assert _request(None).history is None


def test_attempt_request_history_is_read_only() -> None:
    request = _request(None)
    with pytest.raises(AttributeError):
        request.history = _conversation()  # type: ignore[misc]


def test_a_backend_overriding_the_former_names_still_counts_warned() -> None:
    class Older(Plain):
        def supports_history(self) -> bool:
            return True

        def history_refusal(self) -> str | None:
            return "older words"

    older = Older()
    with pytest.warns(DeprecationWarning, match=r"Older\.supports_history\(\) is now") as caught:
        assert older.supports_conversation() is True
    assert caught[0].filename == __file__  # points at the caller
    with pytest.warns(DeprecationWarning, match=r"Older\.history_refusal\(\) is now"):
        assert older.conversation_refusal() == "older words"


def test_a_former_name_overridden_below_a_backend_with_the_new_one_still_counts() -> None:
    class Capable(Plain):
        def supports_conversation(self) -> bool:
            return True

    class TurnedOff(Capable):
        def supports_history(self) -> bool:
            return False

    with pytest.warns(DeprecationWarning):
        assert TurnedOff().supports_conversation() is False
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert Capable().supports_conversation() is True


def test_a_former_name_declared_as_a_constant_still_counts() -> None:
    with pytest.warns(DeprecationWarning, match=r"define `def supports_conversation\(self\)`"):

        class Constant(Plain):
            supports_history = True

    with pytest.warns(DeprecationWarning):
        assert Constant().supports_conversation() is True


def test_calling_the_former_names_asks_the_new_methods_warned() -> None:
    class Newer(Plain):
        def supports_conversation(self) -> bool:
            return True

        def conversation_refusal(self) -> str | None:
            return "newer words"

    with pytest.warns(DeprecationWarning, match=r"Newer\.supports_history\(\) is now") as caught:
        assert Newer().supports_history() is True
    assert caught[0].filename == __file__
    with pytest.warns(DeprecationWarning):
        assert Newer().history_refusal() == "newer words"
    with pytest.warns(DeprecationWarning):
        assert Plain().supports_history() is False
    with pytest.warns(DeprecationWarning):
        assert Plain().history_refusal() is None


def test_a_former_name_override_calling_super_does_not_loop() -> None:
    class Delegating(Plain):
        def supports_history(self) -> bool:
            return super().supports_history()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert Delegating().supports_conversation() is False
        assert Delegating().supports_history() is False


def test_a_backend_with_the_new_names_is_not_warned() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)

        class Newer(Plain):
            def supports_conversation(self) -> bool:
                return True

        assert Newer().supports_conversation() is True
        assert Newer().conversation_refusal() is None
        assert _request(_conversation()).conversation is not None


def test_the_former_spec_module_path_is_the_conversation_loader() -> None:
    sys.modules.pop("caliper.spec.history", None)
    with pytest.warns(DeprecationWarning, match="caliper.spec.conversation"):
        old = importlib.import_module("caliper.spec.history")
    assert old is importlib.import_module("caliper.spec.conversation")
    assert (
        old.load_conversation
        is importlib.import_module("caliper.spec.conversation").load_conversation
    )
