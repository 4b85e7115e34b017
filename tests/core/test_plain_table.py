"""The plain-text table layout (``caliper.report.plain_table``) prints exactly what rich prints.

Every table is printed twice on the same kind of console (no colour, as in a pipe): once by
rich (``console.print``), once by :func:`print_table`; the two texts must be equal. Each case
also checks that the plain path was really taken, so a silent fallback to rich cannot make
a comparison pass.
"""

from __future__ import annotations

import io

import pytest
from rich import box
from rich.console import Console
from rich.table import Table

from caliper.report import _safe_console_class, plain_table


def _console(width: int):
    return _safe_console_class()(file=io.StringIO(), width=width)


def _rich_text(build, width: int) -> str:
    console = _console(width)
    console.print(build())
    return console.file.getvalue()


def _plain_text(build, width: int) -> str:
    console = _console(width)
    table = build()
    plain = plain_table._plain(console, table)
    assert plain is not None, "the plain layout should handle this table"
    assert plain.natural_width() <= console.width, "the table should fit"
    plain_table.print_table(console, table)
    return console.file.getvalue()


NAMES = [
    "task 00001",
    "a much longer task name with words",
    "wide 漢字テスト",
    "brackets [not markup] and \\ slash",
    "emoji code :smile: in a name",
    "trailing space ",
    "",
    "x",
]


def _task_like(**kwargs):
    """A table shaped like the report's task table (every justification, markup, glyphs)."""

    def build() -> Table:
        from rich.markup import escape

        table = Table(**kwargs)
        table.add_column("Task", overflow="fold", min_width=12)
        table.add_column("k (10)", justify="center", no_wrap=True)
        table.add_column("success", justify="right", no_wrap=True)
        table.add_column("activation", justify="center", no_wrap=True)
        table.add_column("attempts", no_wrap=True)
        table.add_column("", no_wrap=True)
        for i, name in enumerate(NAMES):
            table.add_row(
                escape(name),
                f"{i}/10" + (" [yellow]⊘2[/yellow]" if i % 3 == 0 else ""),
                "—" if i % 4 == 0 else f"{i * 11}% [dim]\\[{i}–{i * 12}][/dim]",
                f"[green]{i}/9[/green]\n[dim][{i}–100][/dim]" if i % 2 else "[cyan]9/9[/cyan]",
                "✓✗·⊘" * (i % 3 + 1),
                "[red]✗ FAIL[/red]" if i % 2 else "[green]✓ PASS[/green]",
            )
        return table

    return build


CASES = {
    "boxed": _task_like(),
    "boxed, lines between rows": _task_like(show_lines=True),
    "narrow (simple head, no edge, right padding only)": _task_like(
        box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 1, 0, 0)
    ),
    "no box": _task_like(box=None, show_header=True, pad_edge=False),
    "no header": _task_like(show_header=False),
    "rounded, no edge padding": _task_like(box=box.ROUNDED, pad_edge=False),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("width", [140, 300])
def test_plain_layout_is_rich_layout(case: str, width: int) -> None:
    build = CASES[case]
    assert _plain_text(build, width) == _rich_text(build, width)


def test_sections_and_a_header_only_table() -> None:
    def sections() -> Table:
        table = Table()
        table.add_column("a")
        table.add_column("b", justify="right")
        table.add_row("1", "one")
        table.add_section()
        table.add_row("2", "two")
        table.add_row("3", "three")
        return table

    def header_only() -> Table:
        table = Table()
        table.add_column("only a header")
        return table

    for build in (sections, header_only):
        assert _plain_text(build, 100) == _rich_text(build, 100)


def test_natural_width_is_rich_measurement() -> None:
    from rich.measure import Measurement

    for build in CASES.values():
        console = _console(140)
        expected = Measurement.get(console, console.options.update(width=10_000), build()).maximum
        assert plain_table.natural_width(console, build()) == expected


def test_falls_back_to_rich_when_the_table_does_not_fit_or_has_colour() -> None:
    build = CASES["boxed"]
    narrow = _console(60)
    plain_table.print_table(narrow, build())
    assert narrow.file.getvalue() == _rich_text(build, 60)  # wrapped by rich
    coloured = _safe_console_class()(
        file=io.StringIO(), width=200, force_terminal=True, color_system="standard"
    )
    plain_table.print_table(coloured, build())
    assert "\x1b[" in coloured.file.getvalue()  # rich's styles, not plain text


def test_a_tab_or_a_title_is_left_to_rich() -> None:
    console = _console(100)
    tabbed = Table()
    tabbed.add_column("a")
    tabbed.add_row("x\ty")
    titled = Table(title="Activation")
    titled.add_column("a")
    assert plain_table._plain(console, tabbed) is None
    assert plain_table._plain(console, titled) is None


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_table_exactly_as_wide_as_the_console_prints_as_rich_prints_it(case: str) -> None:
    build = CASES[case]
    width = plain_table.natural_width(_console(300), build())
    assert _plain_text(build, width) == _rich_text(build, width)


def test_cell_width_counts_cells_as_rich_does() -> None:
    from rich.cells import cell_len

    for text in [
        "",
        "task 00001 #3",
        "trailing space ",
        "✓✗·⊘◷",
        "wide 漢字テスト",
        "emoji 😀 and ZWJ 👩‍💻",
        "tab\there",
        "bell\x07 and escape \x1b[2J",
        "del\x7f and c1 \x85",
        "│ box ─ drawing ┃",
        "—–…±→",
        "✓\ufe0f variation selector",
        "#\ufe0f\u20e3 keycap",
        "a\u200db joined",
        "soft\u00adhyphen",
        "e\u0301 combining",
    ]:
        assert plain_table.cell_width(text) == cell_len(text), text


def test_cell_width_of_random_mixed_text_is_rich_cell_len() -> None:
    """Random strings over narrow, wide, zero-width, joining, selector and control
    characters, measured in random order (the narrow-character set grows as it goes)."""
    import random

    from rich.cells import cell_len

    pool = [*"ab -✓✗→−·…│┃é", "漢", "😀", "\u200d", "\ufe0f", "\u0301", "\x07", "\t", "\u00ad"]
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(pool) for _ in range(rng.randrange(0, 12)))
        assert plain_table.cell_width(text) == cell_len(text), repr(text)


def test_each_console_lays_out_markup_its_own_way() -> None:
    # cells laid out for one console are kept for it alone: one without emoji codes must
    # not be given another's ":smile:" → 😄
    def build() -> Table:
        table = Table()
        table.add_column("name")
        table.add_row("emoji code :smile: here")
        return table

    for emoji in (True, False, True):

        def console(emoji=emoji):
            return _safe_console_class()(file=io.StringIO(), width=100, emoji=emoji)

        rich_side, plain_side = console(), console()
        rich_side.print(build())
        plain_table.print_table(plain_side, build())
        assert plain_side.file.getvalue() == rich_side.file.getvalue()
        assert ("😄" in plain_side.file.getvalue()) is emoji


class _Output(io.StringIO):
    """A text file that says which encoding it writes (rich picks its box characters by it)."""

    def __init__(self, encoding: str) -> None:
        super().__init__()
        self._encoding = encoding

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._encoding


def _panel_body(names: list[str]) -> Table:
    table = Table(box=None, show_header=True, pad_edge=False)
    for column in ("#", "outcome", "why"):
        table.add_column(column, overflow="fold")
    for number, name in enumerate(names, 1):
        table.add_row(str(number), "[green]✓[/green] pass", name)
    return table


@pytest.mark.parametrize("width", [12, 30, 50, 80, 137])
@pytest.mark.parametrize(
    "title",
    [
        "task 00001 — 9/10 usable, pass@k 100.0%",
        "[bold]markup[/bold] \\[kept] title",
        "wide 漢字 title",
        "x" * 70,
        "",
    ],
)
def test_a_panel_prints_as_rich_prints_it(width: int, title: str) -> None:
    """``print_panel`` against rich's ``Panel(body, title=..., title_align="left")``: laid
    out here when it can be, else left to rich (a title or table too wide, a narrow
    console); the text is the same either way, also on an ASCII-only console."""

    from rich.panel import Panel

    names = ["expect: ok", "a [x] reason", "expect: The greeting was not loud."]
    for encoding in ("utf-8", "ascii"):
        expected = Console(file=_Output(encoding), width=width, color_system=None)
        got = Console(file=_Output(encoding), width=width, color_system=None)
        expected.print(Panel(_panel_body(names), title=title or None, title_align="left"))
        plain_table.print_panel(got, _panel_body(names), title)
        assert got.file.getvalue() == expected.file.getvalue(), (width, title, encoding)
        laid_out = plain_table._panel_lines(got, _panel_body(names), title)
        if width >= 50 and len(title) < 45:  # these are laid out here, not by rich
            assert laid_out is not None, (width, title)
