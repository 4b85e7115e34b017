"""The small pieces under the pages: safe JSON embedding, the SVG helper, lazy imports."""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from caliper.commands.history import sparkline
from caliper.report.html.safe_json import packed_json, script_json
from caliper.report.html.svg import ChartPoint, interval_bar, time_chart

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "text",
    ["</script>", "</SCRIPT >", "<!--", "-->", "a & b", "<img src=x>", "\u2028\u2029", "{{ 7*7 }}"],
)
def test_script_json_has_no_markup_characters_and_round_trips(text):
    data = {"t": text, "nested": [text, {"k": text}]}
    encoded = script_json(data)
    assert not set(encoded) & set("<>&\u2028\u2029")
    assert json.loads(encoded) == data


@pytest.mark.parametrize(
    "text",
    ["</script>", "</SCRIPT >", "<!--", "a & b", "\u2028\u2029", "é ✓ 日本", "bad byte: \udcff"],
)
def test_packed_json_is_base64_of_gzip_of_the_json_and_the_same_each_time(text):
    data = {"t": text, "nested": [text, {"k": text}]}
    packed = packed_json(data)
    assert re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", packed)
    expected = json.loads(json.dumps(data).replace("\\udcff", "?"))  # lone surrogates: "?"
    assert json.loads(gzip.decompress(base64.b64decode(packed))) == expected
    assert packed_json(data) == packed  # no timestamp in the gzip header


def test_script_json_refuses_nan():
    with pytest.raises(ValueError):
        script_json({"x": float("nan")})


def test_interval_bar_places_band_and_tick():
    svg = str(interval_bar(0.5, 0.25, 0.75, width=100, height=10, label="a <b>"))
    assert '<rect class="band" x="25" y="1" width="50" height="8"' in svg
    assert '<rect class="point" x="49" y="0" width="2" height="10"' in svg
    assert "<title>a &lt;b&gt;</title>" in svg and "<b>" not in svg


def test_interval_bar_without_a_value_is_an_empty_track():
    svg = str(interval_bar(None))
    assert 'class="band"' not in svg and 'class="point"' not in svg


def test_time_chart_band_line_dots_and_links():
    points = [
        ChartPoint(0.0, 0.0, 0.5, "first <x>", href="a.html"),
        ChartPoint(1.0, 0.5, 1.0, "second", href='b".html', hollow=True),
    ]
    svg = str(time_chart(points, width=200, height=100))
    # inner box: x from 40 to 160, y from 10 (100 %) to 78 (0 %)
    assert 'points="40,78 160,10"' in svg
    assert 'd="M40,44 L160,10 L160,44 L40,78 Z"' in svg
    assert '<a class="run-link" href="a.html">' in svg
    assert 'href="b&quot;.html"' in svg
    assert "first &lt;x&gt;" in svg
    assert svg.count('class="dot"') == 2 and 'fill="#ffffff"' in svg


def test_time_chart_breaks_the_line_at_a_run_without_a_rate():
    points = [
        ChartPoint(0.5, 0.2, 0.8, "a"),
        ChartPoint(None, None, None, "b"),
        ChartPoint(0.5, 0.2, 0.8, "c"),
    ]
    svg = str(time_chart(points))
    assert "<polyline" not in svg  # no two neighbouring rated runs to join
    assert svg.count('class="dot"') == 2 and svg.count('<line class="band"') == 2


def test_sparkline_levels():
    assert sparkline([0.0, 0.25, 0.5, 1.0, None]) == "▁▃▅█·"


def _modules_after(args: list[str], cwd: Path) -> set[str]:
    code = (
        "import sys\nfrom caliper.cli import main\n"
        f"main({args!r})\n"
        "print('MODULES', ' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60
    )
    line = next(x for x in out.stdout.splitlines() if x.startswith("MODULES "))
    return set(line.split()[1:])


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["validate", "demo.eval.yaml"],
        ["history", "--help"],
        ["report", "--help"],
        ["history", "demo"],
        ["history", "demo", "--format", "json"],
        ["report", "demo"],
        ["report", "demo", "--format", "json"],
    ],
    ids=" ".join,
)
def test_jinja2_is_imported_only_for_html(tmp_path, args):
    (tmp_path / "demo.eval.yaml").write_text(
        "skills: []\ntasks:\n  - name: t\n    prompt: p\n    assert: assert True\n"
    )
    from html_support import demo_run, save

    save(demo_run(), tmp_path / ".caliper" / "results" / "demo")
    assert not (_modules_after(args, tmp_path) & {"jinja2", "markupsafe"})


def test_templates_and_static_files_are_in_the_wheel(tmp_path):
    uv = os.environ.get("UV") or shutil.which("uv")
    if uv is None:
        pytest.skip("needs uv to build the wheel (run the tests with `uv run`)")
    # --offline: the suite runs in a loopback-only namespace; hatchling comes from uv's cache
    # (filled by any earlier build, e.g. CI's packaging smoke test, which runs first)
    done = subprocess.run(
        [
            uv,
            "build",
            "--offline",
            "--wheel",
            "--out-dir",
            str(tmp_path),
            str(ROOT / "caliper-core"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(done.stderr[-2000:])
    wheel = next(tmp_path.glob("caliper_core-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in (
        "base.html.j2",
        "run.html.j2",
        "compare.html.j2",
        "history.html.j2",
        "macros.html.j2",
        "matrix.html.j2",
    ):
        assert f"caliper/report/html/templates/{name}" in names
    for name in ("page.css", "common.js", "run.js", "attempts.js", "matrix.css", "matrix.js"):
        assert f"caliper/report/html/static/{name}" in names
