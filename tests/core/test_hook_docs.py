"""Every hook is documented, in code and in docs/plugins/hooks.md, with its exact signature."""

from __future__ import annotations

import inspect
from pathlib import Path

from caliper.plugin import hookspecs

DOC = Path(__file__).parents[2] / "docs" / "plugins" / "hooks.md"


def _hooks():
    return [
        (name, fn)
        for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
        if hasattr(fn, "caliper_spec")
    ]


def test_there_are_hooks_for_each_plugin_kind():
    names = {name for name, _ in _hooks()}
    assert {
        "register_backends",
        "register_skill_installers",
        "register_mcp_translators",
        "register_judges",
    } <= names


def test_every_hook_has_a_docstring_saying_when_it_is_called():
    for name, fn in _hooks():
        assert fn.__doc__ and "Called" in fn.__doc__, name


def test_every_hook_is_in_the_reference_with_its_exact_signature():
    text = DOC.read_text()
    for name, fn in _hooks():
        signature = str(inspect.signature(fn)).replace("'", "")
        assert f"`{name}{signature}`" in text, f"{name}{signature} missing from {DOC}"


def test_the_backend_mcp_methods_are_in_the_reference_with_their_exact_signatures():
    from caliper.plugin.backend import Backend

    text = DOC.read_text()
    for name in ("check_mcp_servers", "mcp_tool_name"):
        method = getattr(Backend, name)
        assert method.__doc__, name
        signature = str(inspect.signature(method)).replace("'", "")
        assert f"`{name}{signature}`" in text, f"{name}{signature} missing from {DOC}"
