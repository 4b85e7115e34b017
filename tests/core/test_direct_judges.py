"""``caliper validate``'s judge loading without stevedore or pluggy gives what PluginHost gives
(issue 20), and hands over to PluginHost for any plugin that is not of the ordinary kind."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

from caliper.errors import CaliperError
from caliper.host import plugins
from caliper.host.direct_judges import load_judges
from caliper.host.plugins import JUDGES, PluginHost

_counter = itertools.count()

JUDGE_MODULE = """
import caliper
from caliper.plugin.judge import Judge


class {cls}(Judge):
    key = {key!r}

    def check(self, context):
        raise NotImplementedError


@caliper.hookimpl{options}
def register_judges(register):
    {body}
"""


def _host_view() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(key, judge class) and (plugin name, error) as PluginHost gives them."""
    host = PluginHost()
    judges = host.judges()
    failures = [(f.entry.name, f.error) for f in host.failures if f.entry.group == JUDGES]
    return [(k, type(v).__name__) for k, v in judges.items()], failures


def _direct_view() -> tuple[list[tuple[str, str]], list[tuple[str, str]]] | None:
    loaded = load_judges()
    if loaded is None:
        return None
    judges, failures = loaded
    return [(k, type(v).__name__) for k, v in judges.items()], [
        (f.entry.name, f.error) for f in failures
    ]


class Site:
    """A site folder on sys.path with judge plugins as installed distributions."""

    def __init__(self, root: Path):
        self.root = root
        self.tag = f"dj{next(_counter)}"

    def judge(
        self,
        name: str,
        *,
        key: str | None = None,
        options: str = "",
        body: str | None = None,
        source: str | None = None,
        group: str = JUDGES,
        module: str | None = None,
    ) -> str:
        """Install a distribution whose entry point ``name`` in ``group`` names a module."""
        module = module or f"{self.tag}_{name}"
        if not (self.root / f"{module}.py").exists():
            cls = f"Judge{name.capitalize()}"
            text = source or JUDGE_MODULE.format(
                cls=cls, key=key or name, options=options, body=body or f"register({cls}())"
            )
            (self.root / f"{module}.py").write_text(text)
        info = self.root / f"{self.tag}_{name}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Name: {self.tag}-{name}\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {module}\n")
        return module


@pytest.fixture
def site(tmp_path, monkeypatch):
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delenv("CALIPER_LOAD_PLUGINS", raising=False)
    monkeypatch.delenv("CALIPER_TEST_PLUGINS", raising=False)
    plugins.rescan()
    before = set(sys.modules)
    yield Site(root)
    plugins.rescan()
    for name in set(sys.modules) - before:
        if name.startswith("dj"):
            del sys.modules[name]


def test_the_installed_judges_load_the_same(site):
    direct = _direct_view()
    assert direct is not None
    assert direct == _host_view()
    assert {"assert", "activates", "expect"} <= {k for k, _ in direct[0]}


def test_broken_plugins_fail_the_same_and_the_others_load(site):
    site.judge("good")
    site.judge("noimport", source="raise RuntimeError('cannot import me')\n")
    site.judge("raises", body="raise ValueError('the hook broke')")
    site.judge("missing", source="import caliper\n", module=f"{site.tag}_missing_mod")
    site.judge("nohook", source="x = 1\n")
    (site.root / f"{site.tag}_gone-0.1.dist-info").mkdir()
    (site.root / f"{site.tag}_gone-0.1.dist-info" / "entry_points.txt").write_text(
        f"[{JUDGES}]\ngone = {site.tag}_no_such_module\nattr = {site.tag}_good:NoSuchName\n"
    )
    direct = _direct_view()
    assert direct is not None
    assert direct == _host_view()
    keys, failures = direct
    assert ("good", "JudgeGood") in keys
    assert {name for name, _ in failures} == {"noimport", "raises", "gone", "attr"}
    assert ("noimport", "RuntimeError: cannot import me") in failures
    assert ("raises", "ValueError: the hook broke") in failures


def test_order_and_one_module_for_two_names_are_the_same(site):
    module = site.judge("zeta")
    site.judge("alpha", module=module)  # one module under two names: registered once
    site.judge("mid")
    direct = _direct_view()
    assert direct is not None
    assert direct == _host_view()


def test_test_only_judges_and_the_load_filter_are_honoured(site, monkeypatch):
    site.judge("bravo")
    site.judge("alpha", group="caliper.testing.judges")
    site.judge("charlie")
    monkeypatch.setenv("CALIPER_TEST_PLUGINS", "1")
    plugins.rescan()
    assert _direct_view() == _host_view()
    monkeypatch.setenv("CALIPER_LOAD_PLUGINS", "charlie")
    assert _direct_view() == _host_view()
    assert "bravo" not in {k for k, _ in _direct_view()[0]}


def test_two_plugins_claiming_one_key_is_the_same_error(site):
    site.judge("one", key="same")
    site.judge("two", key="same")
    with pytest.raises(CaliperError) as direct:
        load_judges()
    with pytest.raises(CaliperError) as host:
        PluginHost().judges()
    assert str(direct.value) == str(host.value)
    assert direct.value.exit_code == host.value.exit_code == 2


@pytest.mark.parametrize(
    "kind",
    ["tryfirst", "wrapper", "another hook", "a misspelt hook", "extra argument", "clash"],
)
def test_what_only_pluggy_can_decide_is_left_to_the_plugin_host(site, kind):
    if kind == "tryfirst":
        site.judge("special", options="(tryfirst=True)")
    elif kind == "wrapper":
        site.judge("special", options="(wrapper=True)", body="return (yield)")
    elif kind == "another hook":
        site.judge(
            "special",
            source=JUDGE_MODULE.format(cls="J", key="special", options="", body="register(J())")
            + "\n@caliper.hookimpl\ndef register_executors(register):\n    pass\n",
        )
    elif kind == "a misspelt hook":
        site.judge(
            "special",
            source="import caliper\n@caliper.hookimpl\ndef register_judge(register):\n    pass\n",
        )
    elif kind == "extra argument":
        site.judge(
            "special",
            source="import caliper\n@caliper.hookimpl\ndef register_judges(register, x):\n"
            "    pass\n",
        )
    else:
        module = site.judge("special")
        (site.root / f"{site.tag}_twin-0.1.dist-info").mkdir()
        (site.root / f"{site.tag}_twin-0.1.dist-info" / "entry_points.txt").write_text(
            f"[{JUDGES}]\nspecial = {module}\n"
        )
    assert load_judges() is None
    host_keys, _failures = _host_view()
    assert {"assert", "activates"} <= {k for k, _ in host_keys}


def test_validate_uses_the_plugin_host_when_a_judge_needs_it(site, tmp_path):
    """Through the real script: a ``tryfirst`` judge's key is known, a broken one reported."""
    from test_plugins_installed import run_caliper

    site.judge("special", options="(tryfirst=True)")
    spec = tmp_path / "s.eval.yaml"
    spec.write_text("tasks:\n  - name: t\n    prompt: hi\n    special: yes\n")
    checked = run_caliper(tmp_path, site.root, "validate", str(spec))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    site.judge("noimport", source="raise RuntimeError('cannot import me')\n")
    checked = run_caliper(tmp_path, site.root, "validate", str(spec))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "judge plugin 'noimport' failed to load: RuntimeError: cannot import me" in (
        checked.stdout
    )
