"""What a backend can do is asked of methods; a backend written for the older class
attributes (or properties) keeps working, warned."""

from __future__ import annotations

import warnings

import pytest

from caliper.plugin.backend import CAPABILITIES, Backend


class Plain(Backend):
    id = "plain"
    cli_name = "plain"


def test_the_defaults_are_methods_that_say_no() -> None:
    plain = Plain()
    assert [getattr(plain, name)() for name in CAPABILITIES] == [
        False,
        None,
        False,
        None,
        False,
        None,
        False,
    ]


def test_a_method_override_is_called_and_not_warned(recwarn: pytest.WarningsRecorder) -> None:
    class Versioned(Plain):
        def supports_mcp(self) -> bool:
            return self.cli_name == "plain"

    assert Versioned().supports_mcp() is True
    assert not [w for w in recwarn if w.category is DeprecationWarning]


def test_older_constants_and_properties_become_methods_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning) as caught:

        class Older(Plain):
            supports_mcp = True
            mcp_refusal = None
            history_refusal = "no history here"

            @property
            def supports_history(self) -> bool:
                return False

    assert sorted(str(w.message).split(" is declared")[0] for w in caught) == [
        "Older.history_refusal",
        "Older.mcp_refusal",
        "Older.supports_history",
        "Older.supports_mcp",
    ]
    assert all(w.filename == __file__ for w in caught)  # points at the class statement
    older = Older()
    assert older.supports_mcp() is True
    assert older.mcp_refusal() is None
    assert older.supports_history() is False
    assert older.history_refusal() == "no history here"
    assert older.supports_user_customizations() is False


def test_a_subclass_of_a_converted_backend_is_not_warned_again() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)

        class Older(Plain):
            supports_mcp = True

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)

        class Newer(Older):
            pass

    assert Newer().supports_mcp() is True
