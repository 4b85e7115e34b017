"""The ``ray`` executor plugin: registered through the entry point, cheap to load."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata

from caliper.testing.harness import caliper_executable


def test_the_entry_point_names_the_plugin_module() -> None:
    (entry,) = [e for e in metadata.entry_points(group="caliper.executors") if e.name == "ray"]
    assert entry.value == "caliper_executor_ray.plugin"
    assert entry.dist is not None and entry.dist.name == "caliper-executor-ray"


def test_loading_the_executor_imports_no_ray() -> None:
    code = (
        "import sys\n"
        "from caliper.host.plugins import PluginHost\n"
        "found = PluginHost().executors(['ray'])\n"
        "print(sorted(found), found['ray'].id, [o.name for o in found['ray'].options])\n"
        "print('ray' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["['ray'] ray ['address']", "False"], done.stderr


def test_run_help_lists_the_ray_address_flag_with_its_default() -> None:
    done = subprocess.run(
        [str(caliper_executable()), "run", "--executor", "ray", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "--ray-address" in done.stdout and "default: auto" in done.stdout
