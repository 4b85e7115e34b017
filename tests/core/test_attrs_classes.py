"""The shared ``__repr__`` of ``caliper.system.attrs_classes``: the same text as the one attrs
writes for the class, on real classes of Caliper and on the cases attrs handles specially."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

from caliper.plugin.attempt import Turn, Usage
from caliper.plugin.skills import ResolvedSkill
from caliper.spec.model import Sandbox, SkillSource, Task
from caliper.system import attrs_classes


def attrs_own_repr(instance: Any) -> str:
    """The repr attrs writes for ``instance``'s class: a subclass built by attrs with its
    generated ``__repr__``, called on the instance itself (the generated method reads the
    instance's own class name)."""
    cls = type(instance)
    make = attrs.frozen if cls.__setattr__ is not object.__setattr__ else attrs.define
    twin = make(type(cls.__name__, (cls,), {}))
    assert twin.__repr__ is not attrs_classes.attrs_repr
    return twin.__repr__(instance)


def test_real_classes_read_as_attrs_writes_them(tmp_path: Path) -> None:
    instances = [
        Task(name="a 'quoted' task", prompt="hi\nthere", index=3, checks={"activates": ["x"]}),
        Sandbox(extra_path=("/bin",), forbidden_files=("secret",)),
        SkillSource(kind="path", declared_as="./skills/shout", path="shout", line=4),
        Usage(input_tokens=10, output_tokens=2, cost_usd=0.5),
        Turn(role="tool", tool_name="Skill", tool_input={"skill": "whisper"}),
        ResolvedSkill(name="shout", description="d", source_dir=tmp_path, source_root=tmp_path),
    ]
    for instance in instances:
        assert type(instance).__repr__ is attrs_classes.attrs_repr
        assert repr(instance) == attrs_own_repr(instance)
        assert str(instance) == repr(instance)


def test_fields_hidden_from_repr_are_left_out(tmp_path: Path) -> None:
    skill = ResolvedSkill(name="shout", description="d", source_dir=tmp_path, source_root=tmp_path)
    assert "source_root" not in repr(skill) and "tree" not in repr(skill)
    assert repr(skill).startswith("ResolvedSkill(name='shout', description='d', source_dir=")


def node_class(decorator: Any) -> Any:
    """The same class built by ``decorator``: attrs' own or the shared-repr one."""

    @decorator
    class Node:
        name: str
        children: list[Any] = attrs.Factory(list)
        shown_as: int = attrs.field(default=7, repr=lambda value: f"<{value}>")
        later: int = attrs.field(init=False, default=0)
        unset: int = attrs.field(init=False)

    return Node


@attrs_classes.frozen
class OwnRepr:
    value: int

    def __repr__(self) -> str:
        return "mine"


def test_custom_field_reprs_unset_fields_cycles_and_own_reprs() -> None:
    texts = []
    for decorator in (attrs.define, attrs_classes.define):
        node_type = node_class(decorator)
        node = node_type("root")
        node.children.append(node)  # a cycle: '...' for the instance met again
        node.children.append(node_type("leaf"))
        texts.append(repr(node))
    assert texts[1] == texts[0]
    assert texts[1] == (
        "Node(name='root', children=[..., Node(name='leaf', children=[], shown_as=<7>, later=0,"
        " unset=NOTHING)], shown_as=<7>, later=0, unset=NOTHING)"
    )
    assert repr(OwnRepr(1)) == "mine"


def test_a_local_class_is_named_as_attrs_names_it() -> None:
    @attrs_classes.frozen
    class Local:
        x: int = 1

    assert repr(Local()) == attrs_own_repr(Local()) == "Local(x=1)"


def pair_class(decorator: Any) -> Any:
    """The same small class built by ``decorator``: attrs' own or the shared one."""

    @decorator
    class Pair:
        left: int
        right: list[int] = attrs.Factory(list)
        ignored: int = attrs.field(default=0, eq=False)

    return Pair


@pytest.mark.parametrize("make", ["frozen", "define"])
def test_equality_is_attrs_own_generated_on_first_use(make: str) -> None:
    theirs = pair_class(getattr(attrs, make))
    mine = pair_class(getattr(attrs_classes, make))
    # nothing generated when the class is made: a stub that hands over to attrs' own
    assert "attrs generated" not in mine.__dict__["__eq__"].__code__.co_filename
    for a, b in (((1, [2], 0), (1, [2], 5)), ((1, [2], 0), (1, [3], 0)), ((1,), (2,))):
        assert (mine(*a) == mine(*b)) is (theirs(*a) == theirs(*b))
        assert (mine(*a) != mine(*b)) is (theirs(*a) != theirs(*b))
    assert mine(1) != theirs(1) and mine(1) != (1, [], 0)
    assert "attrs generated" in mine.__dict__["__eq__"].__code__.co_filename


def test_frozen_classes_hash_by_value_and_defined_ones_are_unhashable() -> None:
    assert hash(Sandbox(("/bin",))) == hash(Sandbox(("/bin",)))
    assert len({Sandbox(("/bin",)), Sandbox(("/bin",)), Sandbox()}) == 2
    frozen_pair = pair_class(attrs_classes.frozen)
    assert hash(frozen_pair(1, (), 0)) == hash(frozen_pair(1, (), 9))
    defined_pair = pair_class(attrs_classes.define)
    assert defined_pair.__hash__ is None
    with pytest.raises(TypeError, match="unhashable"):
        hash(defined_pair(1))


def test_fields_left_out_of_equality_are_left_out(tmp_path: Path) -> None:
    one = ResolvedSkill(name="s", description="d", source_dir=tmp_path, source_root=tmp_path)
    other = ResolvedSkill(name="s", description="d", source_dir=tmp_path)
    assert one == other and hash(one) == hash(other)
    assert SkillSource("path", "a") == SkillSource("path", "a") != SkillSource("path", "b")


def test_a_class_with_its_own_equality_is_refused() -> None:
    class OwnEquality:
        x: int = 0

        def __eq__(self, other: object) -> bool:
            return True

    with pytest.raises(TypeError, match="__eq__"):
        attrs_classes.frozen(OwnEquality)
