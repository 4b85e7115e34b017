"""The positioned YAML reader under the spec loader."""

from __future__ import annotations

from pathlib import Path

import pytest

from caliper.spec.yamldoc import format_path, load_document, parse_yaml

P = Path("s.yaml")


def test_positions_of_keys_and_values() -> None:
    doc, problems = parse_yaml(P, "a:\n  - b: 1\n    c: [x, y]\n")
    assert problems == []
    assert doc.data == {"a": [{"b": 1, "c": ["x", "y"]}]}
    assert doc.position(("a", 0, "c", 1)) == (3, 12)
    assert doc.position(("a", 0, "c"), key=True) == (3, 5)
    assert doc.position(("a", 0, "missing")) == (2, 5)  # the nearest parent


def test_duplicate_keys_are_reported_everywhere() -> None:
    _, problems = parse_yaml(P, "a: 1\nb:\n  x: 1\n  x: 2\na: 3\n")
    assert [(p.line, p.column, p.field) for p in problems] == [(4, 3, "b.x"), (5, 1, "a")]


def test_merge_keys_may_be_overridden() -> None:
    doc, problems = parse_yaml(P, "base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\n")
    assert problems == []
    assert doc.data["use"] == {"x": 1, "y": 3}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a: !!python/object/apply:os.system [ls]", "unsupported YAML tag"),
        ("a: !custom {x: 1}", "unsupported YAML tag"),
        ("a: [1\n", "invalid YAML"),
        ("a: b\n---\nc: d\n", "several YAML documents"),
        ("a: \x1b", "control character U+001B"),
        ("{[1]: 2}", "must be a plain value"),
    ],
)
def test_bad_yaml(text: str, fragment: str) -> None:
    _, problems = parse_yaml(P, text)
    assert any(fragment in p.message for p in problems), problems


def test_files_that_are_not_text(tmp_path: Path) -> None:
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"a: 1\nb: caf\xe9\n")
    (problem,) = load_document(latin)[1]
    assert (problem.line, problem.column) == (2, 7)
    assert "not valid UTF-8" in problem.message


def test_a_bad_byte_after_a_byte_order_mark_is_named_where_it_is(tmp_path: Path) -> None:
    """The BOM is dropped before decoding: the message once named the byte three places
    before the bad one (the newline, 0x0a) at the wrong column, and validate decoded
    through the "utf-8-sig" codec module."""
    for body, where in ((b"a: 1\nb: caf\xe9\n", (2, 7)), (b"a: caf\xe9\n", (1, 7))):
        spec = tmp_path / "bom.yaml"
        spec.write_bytes(b"\xef\xbb\xbf" + body)
        (problem,) = load_document(spec)[1]
        assert (problem.line, problem.column) == where
        assert "is not valid UTF-8 (byte 0xe9)" in problem.message
    for raw in (b"\xef\xbb\xbfa: [1]\n", b"\xef\xbb\xbf\xef\xbb\xbfa: 1\n"):
        spec.write_bytes(raw)
        doc, problems = load_document(spec)
        assert problems == []
        assert doc is not None and doc.data == yaml_values(raw.decode("utf-8-sig"))


def yaml_values(text: str) -> object:
    """What PyYAML itself makes of ``text``."""
    import yaml

    return yaml.safe_load(text)


def test_format_path() -> None:
    assert format_path(("tasks", 2, "activates", 0)) == "tasks[2].activates[0]"
    assert format_path(("mcp", "my server")) == "mcp['my server']"
    assert format_path(()) == ""


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a: &x [*x]\n", "an alias refers to a value that contains it"),
        ("a: " + "[" * 1000 + "]" * 1000 + "\n", "nested too deeply"),
        ("a: " + "[" * 70 + "]" * 70 + "\n", "nested more than 64 levels"),
    ],
)
def test_hostile_yaml_is_a_problem_not_a_crash(text: str, fragment: str) -> None:
    doc, problems = parse_yaml(P, text)
    assert doc is None
    assert fragment in problems[0].message


def test_alias_expansion_is_bounded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    doc, problems = parse_yaml(P, "\n".join(lines))
    assert doc is None
    assert "too many aliases" in problems[0].message


def test_big_texts_parse_the_same_with_libyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above FAST_PARSE_BYTES the libyaml parser is used: same values, same positions."""
    from caliper.spec import yamldoc

    text = "tasks:\n" + "".join(
        f"  - name: 't{i}'\n    prompt: |\n      line {i}\n    activates: [a, b]\n"
        for i in range(200)
    )
    monkeypatch.setattr(yamldoc, "FAST_PARSE_BYTES", 10**9)
    slow, _ = parse_yaml(P, text)
    monkeypatch.setattr(yamldoc, "FAST_PARSE_BYTES", 0)
    fast, _ = parse_yaml(P, text)
    assert slow is not None and fast is not None
    assert fast.data == slow.data
    assert fast.values == slow.values and fast.keys == slow.keys


def test_plain_values_do_not_count_as_alias_expansions() -> None:
    text = "a: [" + ", ".join(["x"] * 150_000) + "]\nb: &b [1, 2]\nc: *b\n"
    doc, problems = parse_yaml(P, text)
    assert problems == []
    assert doc is not None and len(doc.data["a"]) == 150_000 and doc.data["c"] == [1, 2]


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize(
    ("text", "where", "fragment"),
    [
        ('a: 1\nb: "bad \x07 here"\n', (2, 9), "control character U+0007"),
        ('a: 1\nb: "never closed\nc: 2\n', (2, 4), "this quoted string is never closed"),
    ],
)
def test_errors_have_positions_with_either_parser(
    monkeypatch: pytest.MonkeyPatch, text: str, where: tuple[int, int], fragment: str, fast: bool
) -> None:
    from caliper.spec import yamldoc

    monkeypatch.setattr(yamldoc, "FAST_PARSE_BYTES", 0 if fast else 10**9)
    doc, problems = parse_yaml(P, text)
    assert doc is None
    assert (problems[0].line, problems[0].column) == where
    assert fragment in problems[0].message
