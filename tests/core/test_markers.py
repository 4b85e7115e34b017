"""``@caliper.hookimpl`` marks a function exactly as pluggy's own marker does, without
importing pluggy (issue 20)."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pluggy
import pytest

from caliper.plugin.markers import HookimplMarker, hookimpl

FLAGS = ("hookwrapper", "optionalhook", "tryfirst", "trylast", "wrapper")


@pytest.mark.parametrize("specname", [None, "register_judges"])
@pytest.mark.parametrize("flags", list(itertools.product([False, True], repeat=len(FLAGS))))
def test_marks_like_pluggy(flags, specname):
    options = dict(zip(FLAGS, flags, strict=True), specname=specname)
    ours, theirs = (
        marker(**options)(lambda register: None)
        for marker in (hookimpl, pluggy.HookimplMarker("caliper"))
    )
    assert ours.caliper_impl == theirs.caliper_impl


def test_bare_use_and_another_project_like_pluggy():
    def a(register):
        pass

    def b(register):
        pass

    assert hookimpl(a) is a
    assert a.caliper_impl == pluggy.HookimplMarker("caliper")(b).caliper_impl
    assert HookimplMarker("other")(a).other_impl == pluggy.HookimplMarker("other")(b).other_impl


def test_pluggy_registers_what_it_marks():
    from caliper.host.plugins import make_plugin_manager

    class Plugin:
        @hookimpl(tryfirst=True)
        def register_judges(self, register):
            register("seen")

    manager = make_plugin_manager()
    manager.register(Plugin())
    found = []
    manager.hook.register_judges(register=found.append)
    assert found == ["seen"]
    assert manager.hook.register_judges.get_hookimpls()[0].tryfirst


def test_importing_the_marker_does_not_import_pluggy():
    code = "import sys, caliper\ncaliper.hookimpl\nprint('pluggy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
