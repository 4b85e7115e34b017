"""EnvReferences: config files get ${NAME} references, the values travel in the environment."""

from __future__ import annotations

from caliper.plugin.mcp import EnvReferences


def test_each_value_gets_its_own_reference():
    secret = EnvReferences()
    assert secret("tok-1") == "${CALIPER_MCP_SECRET_0}"
    assert secret("tok-2") == "${CALIPER_MCP_SECRET_1}"
    assert secret.env == {"CALIPER_MCP_SECRET_0": "tok-1", "CALIPER_MCP_SECRET_1": "tok-2"}


def test_empty_values_are_referenced_unless_asked_to_stay_literal():
    assert EnvReferences()("") == "${CALIPER_MCP_SECRET_0}"
    literal = EnvReferences(empty_as_literal=True)
    assert literal("") == "" and literal.env == {}


def test_another_agents_reference_syntax():
    """opencode expands ``{env:NAME}``, not ``${NAME}``: the template says which."""
    secret = EnvReferences(template="{env:NAME}")
    assert secret("tok-1") == "{env:CALIPER_MCP_SECRET_0}"
    assert secret("tok-2") == "{env:CALIPER_MCP_SECRET_1}"
    assert secret.env == {"CALIPER_MCP_SECRET_0": "tok-1", "CALIPER_MCP_SECRET_1": "tok-2"}


def test_a_template_without_the_name_placeholder_is_refused():
    import pytest

    with pytest.raises(ValueError, match="NAME placeholder"):
        EnvReferences(template="$VAR")
