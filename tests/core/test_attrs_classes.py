"""The shared ``__repr__`` of ``caliper.system.attrs_classes``: the same text as the one attrs
writes for the class, on real classes of Caliper and on the cases attrs handles specially."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

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


def test_equality_and_hashing_are_attrs_own() -> None:
    assert Sandbox(("/bin",)) == Sandbox(("/bin",))
    assert hash(Sandbox(("/bin",))) == hash(Sandbox(("/bin",)))
    assert SkillSource("path", "a") == SkillSource("path", "a") != SkillSource("path", "b")
