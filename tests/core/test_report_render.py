"""Rendering smoke tests: the run report and the compare report contain what users read."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text
from test_results_support import INFRA, NC, TIMEOUT, F, P, attempt, run, snapshot, task

from caliper.plugin.attempt import Usage
from caliper.report import fmt, plain_table
from caliper.report.compare_view import render_compare
from caliper.report.run_view import render_run
from caliper.results.compare import compare_runs


def rendered(draw, *args, **kwargs) -> str:
    console = Console(record=True, width=160, color_system=None)
    draw(*args, console, **kwargs)
    return console.export_text()


def sample_run(**meta):
    return run(
        [
            task(
                "Writes a commit",
                [P, F, F],
                expected=["my-skill"],
                activated=[["my-skill"], ["my-skill"], []],
                reason="subject line is 91 chars",
                final_answer="\n".join(f"line {i}" for i in range(40)),
            ),
            task("Config file", [P, P, P]),
            task("Neighbour probe", [NC, NC], expected=["other"], activated=[["other"], []]),
            task("Flaky", [INFRA, INFRA], aborted=True),
        ],
        skills=[snapshot("my-skill"), snapshot("other")],
        **meta,
    )


def test_a_timeout_is_shown_as_its_own_outcome_and_counted_as_a_failure():
    text = rendered(render_run, run([task("Slow", [P, TIMEOUT, F])]))
    assert "✓◷✗" in text  # its own symbol in the strip
    assert "1/3 ◷1" in text  # counted in the denominator, shown apart from task_fail
    assert "33.3%" in text
    assert "timed out (a failed attempt unless --timeouts unusable)" in text
    opted = rendered(render_run, run([task("Slow", [P, TIMEOUT, F])], timeouts="unusable"))
    assert "1/2 ⊘1" in opted and "50.0%" in opted


def test_run_report_shows_table_score_activation_usage_and_failures():
    text = rendered(render_run, sample_run(), path=Path(".caliper/results/demo/x.json"))
    assert "CALIPER  —  demo  (claude-code:claude-sonnet-5)  —  2026-11-30 18:01 UTC" in text
    for status in ("~ PARTIAL", "✓ PASS", "◇ TRIGGER-ONLY", "⊘ ABORTED"):
        assert status in text
    assert "✓✗✗" in text and "⊘⊘" in text
    assert "33.3%" in text
    assert "pass@k" not in text
    assert "Score" in text and "66.7%" in text and "█" in text
    assert "Activation" in text and "recall" in text and "precision" in text
    assert "Tokens" in text and " in / " in text
    assert "per attempt" in text
    assert "unusable spend" in text and "(2 attempts, not counted in the average)" in text
    assert "Writes a commit — attempt 2 — ✗ task failed" in text
    assert "subject line is 91 chars" in text
    assert "line 39" in text and "line 5\n" not in text  # only the tail of the answer
    assert "activation: expected [my-skill], loaded [none]" in text
    assert "Neighbour probe — attempt 2 — ✗ activation check failed" in text
    assert "Results saved to .caliper/results/demo/x.json" in text


def test_verbose_adds_pass_at_k_columns_and_task_panels():
    text = rendered(render_run, run([task("flaky", [P, F, F])]), verbose=True)
    assert "pass@k" in text and "pass^k" in text
    assert "pass@k 100.0%, pass^k 0.0%" in text  # one of 3 passed, not all (k = 3)
    assert "70.4%" not in text  # the biased plug-in 1 - (2/3)^3 is gone
    assert "flaky — 1/3 usable" in text


def test_no_activation_table_when_nothing_asserts_activates():
    text = rendered(render_run, run([task("a", [P])]))
    assert "recall" not in text
    assert "activation" not in text.lower()


def test_partial_and_ablated_runs_say_so():
    text = rendered(
        render_run,
        sample_run(partial=True, stop_reason="interrupted by Ctrl-C", ablated=["my-skill"]),
    )
    assert "Partial run: interrupted by Ctrl-C" in text
    assert "without my-skill" in text


def test_unknown_usage_renders_dashes():
    results = run([task("a", [P], usage=None, duration=None)])
    text = rendered(render_run, results)
    assert "Tokens   — in / — out" in text
    assert "Agent time  —  — per attempt" in text


def test_compare_report_reads_before_to_after():
    a = run(
        [task("Commits a feature", [P, F, F], usage=Usage(100_000, 0, 0, 0), duration=20.0)],
        skills=[snapshot("my-skill", ablated=True)],
        ablated=["my-skill"],
    )
    b = run(
        [task("Commits a feature", [P, P, P], usage=Usage(60_000, 0, 0, 0), duration=14.0)],
        run_id="b",
        skills=[snapshot("my-skill")],
    )
    text = rendered(render_compare, compare_runs(a, b))
    assert "CALIPER  —  compare  —  demo" in text
    assert "without my-skill → full neighbourhood" in text
    assert "33.3% → 100.0%" in text and "+67 pts" in text
    assert "✓✗✗ → ✓✓✓" in text
    assert "Δ +67 pts [" in text and "not significant" in text  # Fisher p = 0.4
    assert "Tokens per attempt     100K → 60K   Δ -40% (-40K)" in text
    assert "Agent time per attempt 20.0s → 14.0s   Δ -30% (-6.0s)" in text
    assert "No regression." in text


def test_compare_report_flags_regressions_and_unmeasured_tasks():
    a = run([task("x", [P] * 10), task("y", [P]), task("only-before", [P])])
    b = run([task("x", [F] * 10), task("y", [INFRA])], run_id="b", k=5)
    text = rendered(render_compare, compare_runs(a, b))
    assert "−100 pts" in text
    assert "Regression in 1 task(s): x" in text
    assert "Not measured on both sides (left out of Δ): y" in text
    assert "Only in before: only-before" in text
    assert "⚠ different k: 3 → 5" in text


def test_format_helpers():
    assert fmt.tokens(950) == "950"
    assert fmt.tokens(2_700) == "2.7K"
    assert fmt.tokens(79_400) == "79K"
    assert fmt.tokens(1_234_567) == "1.2M"
    assert fmt.duration(27.3) == "27s"
    assert fmt.duration(-0.25) == "-0.2s"
    assert fmt.duration(60) == "1m 0s"
    assert fmt.duration(3725) == "1h 2m"
    assert fmt.bar(0.5, 10) == "█████░░░░░"
    assert fmt.pct(None) == "—"
    assert fmt.tail("a\nb\nc", lines=2) == "…\nb\nc"
    assert attempt("t", 1, P).usage.total_tokens == 1350


def test_trigger_probes_are_not_called_unmeasured():
    probe = dict(expected=["n"], activated=[["n"], []])
    a = run([task("probe", [NC, NC], **probe), task("x", [P])])
    b = run([task("probe", [NC, NC], **probe), task("x", [INFRA])], run_id="b")
    text = rendered(render_compare, compare_runs(a, b))
    assert "Not measured on both sides (left out of Δ): x" in text
    assert "probe" not in text.split("Not measured")[1]


def test_newer_schema_is_flagged():
    text = rendered(render_run, run([task("a", [P])], schema_version=99))
    assert "Saved by a newer caliper (schema 99)" in text


def rendered_at(width: int, draw, *args, **kwargs) -> str:
    console = Console(record=True, width=width, color_system=None)
    draw(*args, console, **kwargs)
    return console.export_text()


def test_run_report_shows_intervals_beside_rates():
    text = rendered(render_run, run([task("Two of three", [P, P, F]), task("All", [P, P, P])]))
    # 2/3: continuity-corrected Wilson 95% [12.53, 98.23] (R: prop.test(2, 3)$conf.int)
    assert "66.7% [12.5–98.2]" in text
    assert "100.0% [31.0–100]" in text  # 3/3: [31.00, 100] (R: prop.test(3, 3))
    assert "95% intervals rest on 3 usable attempts per task; the score on 2 tasks" in text


def test_run_report_level_follows_the_confidence_asked():
    text = rendered(render_run, run([task("Two of three", [P, P, F])]), confidence=0.9)
    assert "90% intervals rest on 3 usable attempts per task" in text
    assert "66.7% [12.5–98.2]" not in text


def test_sample_line_names_the_range_of_attempts_and_unmeasured_tasks():
    results = run([task("a", [P, F]), task("b", [P, P, P]), task("c", [INFRA])])
    text = rendered(render_run, results)
    assert "95% intervals rest on 2–3 usable attempts per task; the score on 2 of 3 tasks" in text


def test_intervals_on_the_activation_board_and_the_score_line():
    text = rendered(render_run, sample_run())
    line = next(row for row in text.splitlines() if row.lstrip().startswith("Score"))
    assert "66.7% [" in line
    board = text.split("Activation")[-1]
    # my-skill: 2 of 3 expected attempts loaded it (recall), 2 of 2 loads wanted (precision)
    assert "66.7% [12.5–98.2]" in board  # 2 of 2 loads: too few for an interval
    assert "100.0% (uninformative)" in board


def test_narrow_report_stacks_intervals_and_fits_80_columns():
    long = "A task whose name is long enough to need wrapping on a narrow terminal"
    results = run(
        [
            task(long, [P, P, F], expected=["my-skill"], activated=[["my-skill"]] * 3),
            task("Config file", [P, INFRA, F]),
        ]
    )
    text = rendered_at(80, render_run, results)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text
    assert "[13–98]" in text  # 2/3, whole percents under the rate
    assert "66.7%" in text


def test_narrow_compare_keeps_strips_whole_with_long_names_and_unsupported_drops():
    long = "Triggers on a commit request from the user"
    loaded = [["my-skill"]] * 10
    a = run(
        [
            task(long, [P] * 10, expected=["my-skill"], activated=loaded),
            task("Config", [P] * 8 + [F] * 2),
        ],
        k=10,
    )
    b = run(
        [
            task(
                long, [P] * 9 + [F], expected=["my-skill"], activated=[["my-skill"]] * 3 + [[]] * 7
            ),
            task("Config", [P] * 5 + [F] * 5),
        ],
        run_id="b",
        k=10,
    )
    text = rendered_at(80, render_compare, compare_runs(a, b))
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "✓" * 10 + " → " + "✓" * 9 + "✗" in text
    assert "✓" * 8 + "✗✗ → " + "✓" * 5 + "✗" * 5 in text
    assert "n.s. = not significant" in text
    assert "Config (−30 pts, not significant)" in text.replace("\n", " ")
    assert "Activation dropped in 1 task(s)" in text


def test_wall_clock_is_the_run_start_to_end_and_agent_time_is_apart():
    # 4 workers: 12 attempts of 60 s each take 12 min of agent time in a 3 min 10 s run
    results = run(
        [task("a", [P] * 12, duration=60.0)],
        started_at="2026-11-30T18:00:00+00:00",
        finished_at="2026-11-30T18:03:10+00:00",
    )
    text = rendered(render_run, results)
    assert "Wall clock  3m 10s" in text
    assert "Agent time  12m 0s  60.0s per attempt" in text
    resumed = run(
        [task("a", [P], duration=60.0)],
        started_at="2026-11-30T18:00:00+00:00",
        finished_at="2026-12-01T09:05:00+00:00",
        resumed_at=["2026-12-01T09:00:00+00:00"],
    )
    text = rendered(render_run, resumed)
    assert "Wall clock  15h 5m  (resumed once" in text and "last session 5m 0s" in text
    # the timestamps are whole seconds: a run that began and ended within one second
    quick = run(
        [task("a", [P], duration=0.7)],
        started_at="2026-11-30T18:00:00+00:00",
        finished_at="2026-11-30T18:00:00+00:00",
    )
    assert "Wall clock  under 1s" in rendered(render_run, quick)


def test_compare_sets_per_attempt_figures_side_by_side_across_k():
    # k=2 against k=55 with the same per-attempt cost: totals differ ×27.5, the cost does not
    a = run(
        [task("x", [P] * 2, usage=Usage(1000, 0, 0, 0), duration=30.0)],
        k=2,
        started_at="2026-11-30T18:00:00+00:00",
        finished_at="2026-11-30T18:01:00+00:00",
    )
    b = run(
        [task("x", [P] * 55, usage=Usage(1000, 0, 0, 0), duration=30.0)],
        run_id="b",
        k=55,
        started_at="2026-11-30T18:00:00+00:00",
        finished_at="2026-11-30T18:09:35+00:00",
    )
    comparison = compare_runs(a, b)
    assert comparison.usage.agent_per_attempt_delta_pct == 0
    assert comparison.usage.tokens_per_attempt_delta_pct == 0
    assert (comparison.usage.a_wall_clock, comparison.usage.b_wall_clock) == (60.0, 575.0)
    text = rendered(render_compare, comparison)
    assert "Agent time per attempt 30.0s → 30.0s" in text
    assert "Wall clock             1m 0s → 9m 35s" in text
    assert "2650%" not in text and "+2650" not in text
    # timestamps are whole seconds: a run that began and ended within one second
    quick = run(
        [task("x", [P] * 2, duration=0.4)],
        run_id="q",
        started_at="2026-11-30T18:00:00+00:00",
        finished_at="2026-11-30T18:00:00+00:00",
    )
    quick_text = rendered(render_compare, compare_runs(quick, b))
    assert "Wall clock             under 1s → 9m 35s" in quick_text
    assert fmt.clock_span(0.0) == "under 1s" and fmt.clock_span(-2.0) == "-2.0s"
    assert fmt.clock_span(1.0) == "1.0s" and fmt.clock_span(None) == fmt.DASH


def test_a_passed_attempt_whose_activation_failed_is_titled_by_what_failed():
    from caliper.report.html.run_data import run_view

    results = run(
        [task("commit", [P, P], expected=["my-skill"], activated=[["my-skill"], []])],
    )
    text = rendered(render_run, results)
    panels = text.split("Attempts that did not pass", 1)[1]
    assert "commit — attempt 2 — ✗ activation check failed (the task's checks passed)" in panels
    assert "✓ pass" not in panels and "attempt 1" not in panels
    view = run_view(results)
    strip = view["tasks"][0]["attempts"]
    assert [a["label"] for a in strip] == [
        "pass",
        "activation check failed (the task's checks passed)",
    ]
    assert view["attempts"][strip[1]["id"]]["verdict"].startswith("activation check failed")


def test_lines_printed_in_one_call_read_as_printed_one_by_one() -> None:
    # The report prints its usage and spend lines in one call; each line must still wrap on
    # its own and keep its style, in colour and without.
    import io

    from rich.rule import Rule
    from rich.text import Text

    from caliper.report.plain_table import print_lines

    lines = [
        Text(" Cost     $1.20 over 10 attempts"),
        Text("   a task name long enough to wrap at forty columns, twice over", style="bold dim"),
        Text("     time  12.0s median", style="dim"),
        Text(""),
        Text("⊘ unusable spend: 1.2K tokens", style="yellow"),
        Rule("not a text: printed on its own"),
        Text.assemble(("   name: ", "bold"), ("50% → 40%", "red"), "  Δ −10 pts"),
    ]
    for color, batch in ((None, 512), ("truecolor", 512), ("truecolor", 2)):
        one_by_one, together = io.StringIO(), io.StringIO()
        console = Console(file=one_by_one, width=40, color_system=color, force_terminal=True)
        for line in lines:
            console.print(line)
        console = Console(file=together, width=40, color_system=color, force_terminal=True)
        print_lines(console, lines, batch=batch)
        assert together.getvalue() == one_by_one.getvalue()
        assert together.getvalue().count("\n") == 8  # seven lines, one wrapped once


@pytest.mark.parametrize(
    "odd",
    [
        Text("centred", justify="center"),
        Text("left-justified, padded to the width", justify="left"),
        Text("no newline at the end", end=""),
        Text("a tab\there"),
        Text("an escape \x1b[2J here"),
        Text("wide: 日本語 ✓ " * 4),
    ],
)
def test_plain_lines_written_as_they_are_read_as_rich_prints_them(odd) -> None:
    """Without colour, lines that fit are written without rich's wrapping; a line rich would
    justify, end otherwise, clean or wrap makes its batch go through rich."""
    import io

    from caliper.report import make_console
    from caliper.report.plain_table import print_lines

    lines = [Text(" Cost     $1.20", style="bold"), Text("   ✓ 日本語 — ±2.0", style="dim"), odd]
    for batch in (1, 512):
        one_by_one, together = io.StringIO(), io.StringIO()
        console = make_console()
        console.file, console.width = one_by_one, 40
        for line in lines:
            console.print(line)
        console = make_console()
        console.file, console.width = together, 40
        print_lines(console, lines, batch=batch)
        assert together.getvalue() == one_by_one.getvalue()


def test_an_attempt_strip_takes_outcomes_or_their_values() -> None:
    from caliper.results.outcome import Outcome

    every = list(Outcome)
    expected = "".join(
        f"[{style}]{symbol}[/{style}]" for symbol, style in (fmt.STRIP_SYMBOLS[o] for o in every)
    )
    assert fmt.strip_markup(every) == expected
    assert fmt.strip_markup([o.value for o in every]) == expected
    assert fmt.strip_markup([]) == fmt.DASH
    with pytest.raises(ValueError):
        fmt.strip_markup([Outcome.PASS, "no-such-outcome"])


@pytest.mark.parametrize("color", [None, "truecolor"])
def test_styled_lines_print_as_their_rich_texts_do(color) -> None:
    import io

    from rich.text import Text

    from caliper.report import make_console
    from caliper.report.plain_table import StyledLine, print_lines

    pairs = [
        (" Cost     $1.20 reported by 10 of 10 attempts", ""),
        ("   task with a bell\x07 and a carriage return\r in its name", "bold dim"),
        ("   an escape \x1b[2J and a tab\there", "dim"),
        ("     time  median 12.0s (IQR 11.0s–13.0s), mean 12.1s [95%: 11.5s–12.7s]", "dim"),
        ("   wide: 日本語 ✓ " * 3, "dim"),
        ("", "dim"),
    ]
    tails = [
        ("   Agent time (task 1): 1.0s → 2.0s  Δ +1.0s  p(adj) 0.01  ", "", "increased", "red"),
        ("   a head in one style, ", "dim", "a tail in another, long enough to wrap", "green"),
        ("   a control \x1b[2J in the tail: ", "", "tail\x07", "bold"),
    ]
    for batch in (1, 512):
        expected, got = io.StringIO(), io.StringIO()
        console = make_console()
        console.file, console.width = expected, 40
        if color:
            console = type(console)(file=expected, width=40, color_system=color,
                                    force_terminal=True)  # fmt: skip
        for text, style in pairs:
            console.print(Text(text, style=style))
        for text, style, tail, tail_style in tails:
            line = Text(text, style=style)
            line.append(tail, style=tail_style)
            console.print(line)
        console = make_console()
        console.file, console.width = got, 40
        if color:
            console = type(console)(file=got, width=40, color_system=color,
                                    force_terminal=True)  # fmt: skip
        lines = [StyledLine(text, style) for text, style in pairs]
        lines += [StyledLine(text, style, tail=t, tail_style=ts) for text, style, t, ts in tails]
        print_lines(console, lines, batch=batch)
        assert got.getvalue() == expected.getvalue()


NAME_SETS = {
    "short": ["a", "task 00001", "x y"],
    "markup-like": ["a [bold]not bold[/bold] name", "back\\slash\\", "[x]"],
    "long": ["a task name long enough to need folding " * 2, "short"],
    "empty": ["", "b"],
}


@pytest.mark.parametrize("width", [60, 80, 100, 140, 250])
@pytest.mark.parametrize("names", sorted(NAME_SETS))
def test_the_task_table_measured_directly_is_the_one_its_probes_pick(names, width, monkeypatch):
    """Task names printed as written let the table be measured instead of a probe of it;
    the layout chosen must be the one the probes choose."""
    results = run([task(name, [P, F, P]) for name in NAME_SETS[names]])
    assert plain_table.shown_as_written(t.name for t in results.tasks)
    _measured_is_probed(render_run, results, width, monkeypatch)


def _measured_is_probed(draw, shown, width: int, monkeypatch) -> None:
    """``draw`` of ``shown`` on a plain console ``width`` wide prints the same text with the
    table measured itself as with the table probed."""
    import io

    from caliper.report import make_console

    def drawn() -> str:
        console = make_console()
        console.file, console.width = io.StringIO(), width
        draw(shown, console)
        return console.file.getvalue()

    measured = drawn()
    monkeypatch.setattr(plain_table, "shown_as_written", lambda names: False)
    assert drawn() == measured


def test_names_with_emoji_codes_or_wide_text_are_probed() -> None:
    for name in ("emoji :smile: code", "wide 漢字", "tab\there"):
        assert not plain_table.shown_as_written([name])


@pytest.mark.parametrize("width", [60, 80, 100, 140, 250])
@pytest.mark.parametrize("names", sorted(NAME_SETS))
def test_the_compare_table_measured_directly_is_the_one_its_probes_pick(names, width, monkeypatch):
    """Compare's table is measured itself when its task names are shown as written; the
    layout chosen (boxed, narrow, short verdicts) must be the one the probes choose."""
    a = run([task(name, [P, P, P]) for name in NAME_SETS[names]])
    b = run([task(name, [P, F, F]) for name in NAME_SETS[names]], run_id="b")
    _measured_is_probed(render_compare, compare_runs(a, b), width, monkeypatch)


def _rich_wrapped(text: str, width: int) -> str:
    import io

    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(Text(text, style="bold red"))
    return console.file.getvalue()


WRAP_TEXTS = [
    " Drops not supported by the data: "
    + ", ".join(f"task {i:05d} #9 (−10 pts, not significant)" for i in range(60)),
    " Regression in 3 task(s): alpha, beta, gamma",
    "word " * 40,
    "  two  spaces   between   words   and   trailing     ",
    " a plain space, é accents, ✓✗ glyphs → arrows · dots " * 4,
    "x" * 30 + " " + "y" * 30 + "      ",
    "     ",
    " " * 90,
    "",
    "ends with a long run of spaces" + " " * 70,
]


@pytest.mark.parametrize("width", [20, 30, 31, 40, 61, 80, 133])
def test_plain_wrapping_is_rich_wrapping(width):
    """``wrapped_lines`` against rich's own wrap of the same text; texts it leaves to rich
    (a word wider than the line, wide or zero-width characters, tabs) give ``None``."""
    for text in WRAP_TEXTS:
        lines = plain_table.wrapped_lines(text, width)
        if max((len(w.rstrip()) for w in text.split()), default=0) > width:
            assert lines is None
            continue
        assert lines is not None, text
        assert "".join(line + "\n" for line in lines) == _rich_wrapped(text, width), text
    for refused in (
        "a 漢字 b",
        "zero\u200bwidth",
        "tab\there",
        "e\u0301 combining",
        "no\u00a0break",
    ):
        assert plain_table.wrapped_lines(refused, 40) is None


@pytest.mark.parametrize("width", [25, 40, 80, 120])
def test_long_lines_print_as_rich_prints_them(width):
    """``print_lines`` of texts that must wrap writes what printing each with rich writes,
    on a console without colour (laid out here) and with colour (rich)."""
    import io

    texts = [Text(text, style="yellow") for text in WRAP_TEXTS] + [Text("a 漢字 b " * 20)]
    for color in (None, "truecolor"):
        expected = Console(file=io.StringIO(), width=width, color_system=color,
                           force_terminal=color is not None)  # fmt: skip
        for text in texts:
            expected.print(text)
        got = Console(file=io.StringIO(), width=width, color_system=color,
                      force_terminal=color is not None)  # fmt: skip
        plain_table.print_lines(got, texts)
        assert got.file.getvalue() == expected.file.getvalue()


@pytest.mark.parametrize("color", [None, "truecolor"])
def test_explain_shows_task_names_as_written(color):
    """``compare --explain``'s table of tests prints a task name that looks like markup as it
    is (it once went through rich's markup, which ate ``[red]``), with and without colour."""
    import io

    from caliper.report.compare_explain import render_explain

    name = "fix [red] in [bold]parser[/bold]"
    a = run([task(name, [P, P, P]), task("plain", [P, F, P])])
    b = run([task(name, [F, F, P]), task("plain", [P, P, P])], run_id="b")
    console = Console(file=io.StringIO(), width=160, color_system=color,
                      force_terminal=color is not None)  # fmt: skip
    render_explain(compare_runs(a, b), console)
    text = console.file.getvalue()
    assert name in Text.from_ansi(text).plain


def test_long_lines_on_a_soft_wrapping_console_are_left_to_rich():
    import io

    text = Text(WRAP_TEXTS[0], style="yellow")
    expected = Console(file=io.StringIO(), width=50, color_system=None, soft_wrap=True)
    expected.print(text)
    got = Console(file=io.StringIO(), width=50, color_system=None, soft_wrap=True)
    plain_table.print_lines(got, [text])
    assert got.file.getvalue() == expected.file.getvalue()


@pytest.mark.parametrize("width", [40, 80, 137])
def test_verbose_task_panels_laid_out_here_are_rich_panels(width, monkeypatch):
    """``report -v`` on a console without colour: each task's panel laid out by plain_table
    is the panel rich draws (names with markup, long names whose title wraps inside)."""
    import io

    from caliper.report import make_console

    names = ["short", "a [bold]task[/bold] \\[x]", "a task name long enough " * 3]
    results = run([task(name, [P, F, P], usage=Usage(10, 5, 0, 0)) for name in names])

    def drawn() -> str:
        console = make_console()
        console.file, console.width = io.StringIO(), width
        render_run(results, console, verbose=True)
        return console.file.getvalue()

    real, made = plain_table._panel_lines, []

    def counted(console, body, title):
        lines = real(console, body, title)
        made.append(lines is not None)
        return lines

    monkeypatch.setattr(plain_table, "_panel_lines", counted)
    laid_out = drawn()
    assert any(made) or width < 80  # at 80 columns and more some panel is laid out here
    monkeypatch.setattr(plain_table, "_panel_lines", lambda console, body, title: None)
    assert drawn() == laid_out
