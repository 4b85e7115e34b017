"""``python -m caliper.testing.example examples/NAME``: run one example offline, as the demo does.

The example's spec runs through the real ``caliper`` command and the real, provisioned
``claude`` CLI, whose "model" is the scripted model server on 127.0.0.1 playing the agent
from the example's ``scripted-model.yaml`` (a correct agent: the run is green), or from
``scripted-model.broken.yaml`` with ``--broken`` (an agent with the failure the example
catches: the task it is about fails, saying why). It runs inside a loopback-only network
namespace, with a throw-away HOME; results are saved where ``caliper run`` saves them.
Arguments after the folder (and ``--broken``) go to ``caliper run``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from caliper.testing import agent_clis
from caliper.testing.harness import caliper_executable
from caliper.testing.offline import loopback_only

MODEL_FILE = "scripted-model.yaml"
BROKEN_MODEL_FILE = "scripted-model.broken.yaml"

USAGE = """\
usage: python -m caliper.testing.example EXAMPLE-FOLDER [--broken] [CALIPER-RUN-ARGS...]

Runs the example's spec offline: the real `claude` CLI against a scripted model that plays a
correct agent (scripted-model.yaml), or with --broken an agent with the example's failure
(scripted-model.broken.yaml). Exit status: caliper run's."""


class NotAnExample(ValueError):
    """A folder that is not a runnable example (no spec, or no scripted model)."""


def example_spec(folder: Path) -> Path:
    """The example's spec: ``FOLDER/FOLDER-NAME.eval.yaml``, or the folder's only spec."""
    named = folder / f"{folder.name}.eval.yaml"
    if named.is_file():
        return named
    specs = sorted(folder.glob("*.eval.yaml"))
    if len(specs) != 1:
        raise NotAnExample(f"{folder}: expected one *.eval.yaml spec, found {len(specs)}")
    return specs[0]


def scripted_model(folder: Path, *, broken: bool = False) -> Path:
    """The scripted model that plays the agent of the example in ``folder``."""
    path = folder / (BROKEN_MODEL_FILE if broken else MODEL_FILE)
    if not path.is_file():
        raise NotAnExample(f"{folder}: no {path.name}, so there is no scripted agent to run it")
    return path


def example_env(server_url: str, home: str, base: Mapping[str, str]) -> dict[str, str]:
    """The environment ``caliper run`` gets: ``claude`` found on PATH and pointed at the
    scripted model at ``server_url``, with a stand-in HOME and a key that is not real."""
    return {
        **base,
        "HOME": home,  # a stand-in for the user's home: attempts never write to it
        "ANTHROPIC_BASE_URL": server_url,
        "ANTHROPIC_API_KEY": "sk-example-not-a-real-key",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "PATH": f"{agent_clis.shim_dir()}{os.pathsep}{base.get('PATH', '')}",
    }


def main(argv: list[str] | None = None) -> int:
    """Run an example; see the module docstring."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not args else sys.stdout)
        return 2 if not args else 0
    folder = Path(args.pop(0))
    broken = "--broken" in args
    extra = [a for a in args if a != "--broken"]
    try:
        spec = example_spec(folder)
        model = scripted_model(folder, broken=broken)
    except NotAnExample as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    isolated, why = loopback_only()
    if not isolated and os.environ.get("CALIPER_OFFLINE") is None:
        wrapper = [sys.executable, "-m", "caliper.testing.offline", "--"]
        this = [sys.executable, "-m", "caliper.testing.example"]
        return subprocess.call([*wrapper, *this, str(folder), *args])
    claude = agent_clis.bin_path("claude")
    if not claude.exists():
        print(
            f"Running an example needs the pinned claude CLI at {claude}.\n"
            f"Provision it first: {agent_clis.INSTALL_COMMAND}",
            file=sys.stderr,
        )
        return 3
    from caliper.testing.model_server import ModelServer

    with (
        ModelServer(model) as server,
        tempfile.TemporaryDirectory(prefix="caliper-example-home-") as home,
    ):
        command = [str(caliper_executable()), "run", spec.name, "--model", "claude-code", *extra]
        print("$ caliper " + " ".join(command[1:]), file=sys.stderr)
        played = "an agent with the example's failure" if broken else "a correct agent"
        print(
            f"(in {folder}; claude → scripted model at {server.url}, playing {played}: "
            f"{model.name}; {why or 'loopback only'})",
            file=sys.stderr,
        )
        env = example_env(server.url, home, os.environ)
        return subprocess.call(command, env=env, cwd=spec.parent)


if __name__ == "__main__":
    sys.exit(main())
