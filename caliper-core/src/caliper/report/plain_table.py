"""Big tables without rich's layout engine, when the output has no colour.

Rich lays a table out cell by cell through its whole renderable machinery: measuring, then
rendering every cell through ``Padding`` → ``Text`` → segments. A report of a
50,000-attempt run has a 5,000-row task table, and that took most of ``caliper report``'s
time. When the console writes no colour (a pipe, a file, ``TERM=dumb``) every style is
dropped anyway, so the table is just text: this module lays it out directly, following
rich's own rules for the case it handles, and the output is the same character for
character (``tests/core/test_plain_table.py`` diffs the two).

It handles the tables the report views build: string cells (rich markup), no title, caption
or footer, no fixed column widths, and a table that fits the console at its natural width
(so nothing wraps). For anything else :func:`print_table` lets rich do it.
"""

from __future__ import annotations

import itertools
import re
import weakref
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions
    from rich.table import Table

# The widest console options the report views measure a table's natural width against.
MEASURE_WIDTH = 10_000

_markup_lines: weakref.WeakKeyDictionary[Any, dict[str, list[str] | None]] = (
    weakref.WeakKeyDictionary()
)
"""Per console, the lines of each cell markup laid out so far (a report measures a table,
then lays out another with mostly the same cells)."""


def cell_width(line: str) -> int:
    """The terminal cells ``line`` takes, as :func:`rich.cells.cell_len` counts them
    (one a character, without asking rich, when each character takes one cell)."""
    if (line.isascii() and line.isprintable()) or _one_cell_each(line):
        return len(line)
    from rich.cells import cell_len

    return cell_len(line)


_ONE_CELL: set[str] = {chr(code) for code in range(0x20, 0x7F)}
"""Characters rich gives one cell each (printable ASCII, and every other met so far)."""


def _one_cell_each(text: str) -> bool:
    """Whether rich counts one cell for each character of ``text``: its width is then its
    length. (Rich sums the characters' own widths unless a zero-width joiner or variation
    selector is present, and those take no cell of their own, so are never in the set.)"""
    if _ONE_CELL.issuperset(text):
        return True
    from rich.cells import get_character_cell_size

    for character in set(text) - _ONE_CELL:
        if get_character_cell_size(character) != 1:
            return False
        _ONE_CELL.add(character)
    return True


def shown_as_written(names: Iterable[str]) -> bool:
    """Whether every name is printable ASCII without ``:`` (no emoji code): escaped as
    markup, each is shown as written, one column a character, so a table of them is as wide
    as a width probe of their longest length."""
    return all(name.isascii() and name.isprintable() and ":" not in name for name in names)


class _Plain:
    """A table's header and cells as plain lines, with its layout rules (see ``_plain``)."""

    def __init__(self, table: Table, cells: list[list[list[str]]]):
        self.table = table
        self.cells = cells  # per column: the header's lines (when shown), then each row's
        self._widths: list[int] | None = None
        _, right, _, left = table.padding
        count = len(table.columns)
        self.pads = []
        for index in range(count):
            pad_left = 0 if not table.pad_edge and index == 0 else left
            pad_right = 0 if not table.pad_edge and index == count - 1 else right
            self.pads.append((pad_left, pad_right))

    @property
    def extra_width(self) -> int:
        """Border columns: the edges (when shown) and one divider between columns."""
        table = self.table
        width = 0
        if table.box and table.show_edge:
            width += 2
        if table.box:
            width += len(table.columns) - 1
        return width

    def widths(self) -> list[int]:
        """Each column's width with its padding, as rich gives it at an unlimited width
        (worked out once: the cells never change)."""
        if self._widths is not None:
            return list(self._widths)
        widths = []
        for column, lines, (pad_left, pad_right) in zip(
            self.table.columns, self.cells, self.pads, strict=True
        ):
            widest = max((cell_width(line) for cell in lines for line in cell), default=0)
            width = widest + pad_left + pad_right
            if column.min_width is not None:
                width = max(width, column.min_width + pad_left + pad_right)
            widths.append(width)
        self._widths = widths
        return list(widths)

    def natural_width(self) -> int:
        """The table's width when nothing wraps (rich's measured maximum)."""
        return sum(self.widths()) + self.extra_width

    def lines(self, options: ConsoleOptions, safe_box: bool) -> Iterator[str]:
        """The table's lines, as rich renders it when it fits (``options``: the console's)."""
        table = self.table
        widths = [width or 1 for width in self.widths()]
        box = table.box.substitute(options, safe=safe_box) if table.box else None
        if box is not None and not table.show_header:
            box = box.get_plain_headed_box()
        edge = table.show_edge
        if box is not None and edge:
            yield box.get_top(widths)
        rows = list(zip(*self.cells, strict=True))
        last_index = len(rows) - 1
        for index, row in enumerate(rows):
            header = table.show_header and index == 0
            height = max(len(cell) for cell in row)
            shaped = [
                self._shape(cell, column, width, pads, height, bottom=header)
                for cell, column, width, pads in zip(
                    row, table.columns, widths, self.pads, strict=True
                )
            ]
            if box is None:
                for line_no in range(height):
                    yield "".join(cell[line_no] for cell in shaped)
            else:
                if index == 0:
                    left, right, divider = box.head_left, box.head_right, box.head_vertical
                elif index == last_index:
                    left, right, divider = box.foot_left, box.foot_right, box.foot_vertical
                else:
                    left, right, divider = box.mid_left, box.mid_right, box.mid_vertical
                for line_no in range(height):
                    body = divider.join(cell[line_no] for cell in shaped)
                    yield f"{left}{body}{right}" if edge else body
                if header:
                    yield box.get_row(widths, "head", edge=edge)
            if box is not None and not header and index != last_index:
                data_row = table.rows[index - (1 if table.show_header else 0)]
                if table.show_lines or data_row.end_section:
                    yield box.get_row(widths, "row", edge=edge)
        if box is not None and edge:
            yield box.get_bottom(widths)

    @staticmethod
    def _shape(
        cell: list[str],
        column: Any,
        width: int,
        pads: tuple[int, int],
        height: int,
        *,
        bottom: bool,
    ) -> list[str]:
        """One cell's lines: justified inside its padding, then padded to ``height`` lines
        (blank lines below it, or above it for the header, which rich aligns to the bottom)."""
        pad_left, pad_right = pads
        inner = max(width - pad_left - pad_right, 0)
        out = []
        for line in cell:
            if column.justify in ("center", "right"):
                line = line.rstrip()
            excess = inner - cell_width(line)
            if column.justify == "center":
                line = " " * (excess // 2) + line + " " * (excess - excess // 2)
            elif column.justify == "right":
                line = " " * excess + line
            else:
                line = line + " " * excess
            out.append(" " * pad_left + line + " " * pad_right)
        blank = [" " * width] * (height - len(out))
        return blank + out if bottom else out + blank


def _plain(console: Console, table: Table) -> _Plain | None:
    """``table`` as plain lines when this module lays it out exactly as rich would (see the
    module docstring), else ``None``."""
    from rich.table import Table

    if not isinstance(table, Table) or not table.columns:
        return None
    if not table.rows and not table.show_header:
        return None  # nothing to measure: rich gives such a table the whole width
    top, _, bottom, _ = table.padding
    if (
        table.title
        or table.caption
        or table.show_footer
        or table.expand
        or table.width is not None
        or table.min_width is not None
        or table.collapse_padding
        or table.leading
        or top
        or bottom
    ):
        return None
    cache = _markup_lines.setdefault(console, {})
    cells = []
    for column in table.columns:
        if column.width is not None or column.max_width is not None or column.ratio:
            return None
        if column.vertical != "top" or column.justify not in ("left", "center", "right"):
            return None
        lines = []
        shown = (column.header, *column.cells) if table.show_header else tuple(column.cells)
        for renderable in shown:
            if not isinstance(renderable, str):
                return None
            found = cache.get(renderable, False)
            if found is False:
                found = cache[renderable] = _cell_lines(console, renderable)
            if found is None:
                return None
            lines.append(found)
        cells.append(lines)
    return _Plain(table, cells)


def _cell_lines(console: Console, markup: str) -> list[str] | None:
    """The lines rich shows for a string cell (markup parsed, text cleaned by the console),
    or ``None`` for text whose line breaks or tabs rich treats in ways not mirrored here."""
    plain = console.render_str(markup, highlight=False).plain
    if "\t" in plain:
        return None
    lines = plain.split("\n")
    if plain and plain.splitlines() != lines:
        return None  # a trailing newline, or a line break other than "\n"
    return lines


def _plain_console(console: Console) -> bool:
    """True when ``console`` writes text only: no colour or style codes, nothing recorded."""
    return console.color_system is None and not console.record and not console.legacy_windows


def natural_width(console: Console, table: Table) -> int:
    """``table``'s width when nothing wraps, as rich measures it at ``MEASURE_WIDTH``."""
    plain = _plain(console, table)
    if plain is not None and plain.natural_width() <= MEASURE_WIDTH:
        return plain.natural_width()
    from rich.measure import Measurement

    options = console.options.update(width=MEASURE_WIDTH)
    return Measurement.get(console, options, table).maximum


class _Lines:
    """Already laid out lines, each within the console's width and free of control
    characters, printed as they are: one segment for them all, printed with ``crop=False``
    (:func:`_print_lines`), so rich neither splits nor measures them again."""

    def __init__(self, lines: list[str]):
        self.text = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Any]:
        from rich.segment import Segment

        if self.text:
            yield Segment("\n".join(self.text) + "\n")


def _print_lines(console: Console, lines: list[str]) -> None:
    """Print ``lines`` (laid out to fit ``console``, no control characters) as they are."""
    console.print(_Lines(lines), crop=False)


def print_table(console: Console, table: Table) -> None:
    """Print ``table`` to ``console``: laid out here when the console writes no colour and the
    table fits at its natural width (the same text as rich's, in a fraction of the time),
    else by rich."""
    plain = _plain(console, table) if _plain_console(console) else None
    if plain is None or plain.natural_width() > console.width:
        console.print(table)
        return
    safe_box = console.safe_box if table.safe_box is None else table.safe_box
    _print_lines(console, list(plain.lines(console.options, safe_box)))


def print_panel(console: Console, body: Table, title: str | None) -> None:
    """Print ``Panel(body, title=title, title_align="left")`` (rich's defaults otherwise: a
    rounded box as wide as the console, one space of padding either side) to ``console``:
    laid out here when the console writes no colour, the title (markup) is printable text
    that fits on the top edge and the table fits inside at its natural width; else by rich.

    Rich's layout of that panel: the top edge ``╭─ title ─…─╮``, each line of the table
    padded to the inner width between ``│ `` and `` │``, the bottom edge ``╰─…─╯``."""
    from rich.panel import Panel

    lines = _panel_lines(console, body, title) if _plain_console(console) else None
    if lines is None:
        console.print(Panel(body, title=title, title_align="left"))
        return
    _print_lines(console, lines)


def panel_title_fits(title: str, width: int) -> bool:
    """Whether the panel title ``title`` (markup) fits on the top edge of a panel ``width``
    columns wide (rich cuts a longer one with "…")."""
    from rich.text import Text

    return _shown_title_fits(Text.from_markup(title).plain, width)


def _shown_title_fits(shown: str, width: int) -> bool:
    # the corners, a rule either side and a space either side of the title
    return cell_width(shown) <= width - 6


def _panel_lines(console: Console, body: Table, title: str | None) -> list[str] | None:
    from rich import box as boxes
    from rich.text import Text

    width = console.width
    inner = width - 4  # the borders and the padding
    title = title or None  # rich draws no title for an empty one
    shown = "" if title is None else Text.from_markup(title).plain
    plain = _plain(console, body)
    if (
        inner < 1
        or not shown.isprintable()
        or not _shown_title_fits(shown, width)
        or plain is None
        or plain.natural_width() > inner
    ):
        return None
    safe_box = console.safe_box if body.safe_box is None else body.safe_box
    box = boxes.ROUNDED.substitute(console.options, safe=console.safe_box)
    if title is None:
        lines = [box.get_top([width - 2])]
    else:
        heading = f" {shown} "
        lines = [
            box.top_left + box.top + heading + box.top * (inner - cell_width(heading))
            + box.top + box.top_right
        ]  # fmt: skip
    for line in plain.lines(console.options, safe_box):
        lines.append(f"{box.mid_left} {line}{' ' * (inner - cell_width(line))} {box.mid_right}")
    lines.append(box.get_bottom([width - 2]))
    return lines


class StyledLine:
    """A line of text in one style, optionally ending in a ``tail`` of another, for
    :func:`print_lines`: printed as ``Text(text, style)`` with the tail appended in
    ``tail_style`` would be, the rich ``Text`` made only when rich prints it (a report's
    thousands of spend lines are written as they are when the console has no colour)."""

    __slots__ = ("head", "plain", "style", "tail", "tail_style")
    justify = None
    end = "\n"

    def __init__(self, text: str, style: str = "", *, tail: str = "", tail_style: str = "") -> None:
        self.head = text
        self.tail = tail
        self.plain = text + tail
        self.style = style
        self.tail_style = tail_style

    def __rich__(self) -> Any:
        """The rich ``Text`` of this line."""
        from rich.text import Text

        text = Text(self.head, style=self.style)
        if self.tail:
            text.append(self.tail, style=self.tail_style)
        return text


def print_lines(console: Console, lines: Sequence[Any], *, batch: int = 512) -> None:
    """Print ``lines`` (rich ``Text`` or :class:`StyledLine`) one under the other, as one
    ``console.print`` of each would, in one call per ``batch`` lines: rich joins the texts of
    one call with the separator and wraps each line alone, and a call has a fixed cost that
    thousands of lines would each pay. When the console writes no colour and every line of a
    batch is printable text that fits the width (rich would neither wrap nor crop it, and
    styles are dropped), the batch is written as it is, without rich's wrapping. Anything
    else is printed on its own."""
    from rich.text import Text

    texts = (Text, StyledLine)
    held: list[Text | StyledLine] = []
    for line in lines:
        if isinstance(line, texts):
            held.append(line)
            if len(held) < batch:
                continue
        if held:
            _print_texts(console, held)
            held = []
        if not isinstance(line, texts):
            console.print(line)
    if held:
        _print_texts(console, held)


def _print_texts(console: Console, texts: list[Any]) -> None:
    if _plain_console(console) and all(_wraps_plainly(text) for text in texts):
        width = console.width
        lines: list[str] = []
        for text in texts:
            line = text.plain
            if line.isprintable() and cell_width(line) <= width:
                lines.append(line)
                continue
            wrapped = None if console.soft_wrap else wrapped_lines(line, width)
            if wrapped is None:
                break
            lines.extend(wrapped)
        else:
            _print_lines(console, lines)
            return
    console.print(*texts, sep="\n")


def _wraps_plainly(text: Any) -> bool:
    """Whether rich prints ``text`` (a ``Text`` or :class:`StyledLine`) with its default
    layout: left as written, word-wrapped, followed by a new line."""
    return (
        text.justify in (None, "default")
        and text.end == "\n"
        and getattr(text, "overflow", None) is None
        and not getattr(text, "no_wrap", None)
    )


_WORD = re.compile(r"\s*\S+\s*")
"""A word as rich's wrap sees it: its leading (at the start) and trailing whitespace with it."""
_TRAILING_SPACE = re.compile(r"\s+$")


def wrapped_lines(text: str, width: int) -> list[str] | None:
    """The lines rich's word wrap makes of the one-line ``text`` at ``width`` columns
    (``console.print(Text(text))``), when every character of it is printable and one cell
    wide and no word is wider than ``width``; ``None`` otherwise (rich must do it).

    Rich's rule: a word goes on the current line when the line's width so far plus the word
    without its trailing whitespace fits, else it starts the next line; a line keeps its
    trailing whitespace up to ``width`` characters. With one cell a character, lengths are
    widths, so a paragraph of thousands of words is laid out without measuring each line."""
    if width < 1 or not text.isprintable() or not _one_cell_each(text):
        return None
    breaks = [0]
    offset = 0
    for word in _WORD.finditer(text):
        start, end = word.span()
        length = len(word.group().rstrip())
        if length > width:
            return None  # rich folds a word wider than a line
        if width - offset >= length:
            offset += end - start
        else:
            breaks.append(start)
            offset = end - start
    breaks.append(len(text))
    lines = []
    for start, end in itertools.pairwise(breaks):
        line = text[start:end]
        if len(line) > width:  # whitespace past the width is dropped, then the rest cut
            trailing = _TRAILING_SPACE.search(line)
            if trailing is not None:
                line = line[: len(line) - min(len(trailing.group()), len(line) - width)]
            line = line[:width]
        lines.append(line)
    return lines
