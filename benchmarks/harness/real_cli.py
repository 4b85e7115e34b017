"""The real-CLI floor: caliper on a pinned agent CLI against the bare CLI doing the same turn.

Run from the repository root (it re-enters the loopback-only namespace itself)::

    .venv/bin/python benchmarks/harness/real_cli.py [--k 10] [--workers 2] [--pairs 3]
        [--backend gemini] [--smoke] [--caliper OTHER/.venv/bin/caliper]

Both sides talk to the same scripted model server (``caliper.testing.model_server``): the model
loads the ``whisper`` skill and answers ``good night, everyone.``. caliper runs
``examples/hello``'s two skills with one activates-only task ``k`` times on ``workers`` workers;
the bare side runs the CLI itself ``k`` times, ``workers`` at a time, each turn exactly as
caliper's backend runs it:

* a fresh sandbox (``home``, ``work``, ``tmp``) seeded by the backend's own functions: for
  ``claude``, ``home.seed_home`` (``settings.json`` with the built-in plugin off and the
  ``claudeMdExcludes``) and ``home.build_env`` (the minimal environment, the forwarded
  ``ANTHROPIC_*`` variables, the quiet switches); for ``gemini``, ``home.seed`` (its
  ``settings.json``, the ``.env`` fences, its environment);
* both skill folders copied where the CLI discovers them (``~/.claude/skills/<name>``,
  ``~/.gemini/skills/<name>``);
* the backend's attempt command line (``invocation.attempt_argv``), the prompt on stdin, in the
  working folder; the sandbox removed afterwards.

Every turn's result is checked after the timing, on both sides: the bare turn's stream must
show ``whisper`` loaded by the skill tool (and nothing else) and the expected answer; caliper's
saved results must hold ``k`` completed attempts that activated ``whisper``. A turn that did
not do the work stops the benchmark with exit 1.

Before timing, one turn of each side runs through a recording wrapper (``<CLI>_CLI_PATH`` for
caliper) that saves the command line, environment, working folder, stdin and every file of the
sandbox (HOME and what is beside it); the two recordings must be equal once the sandbox roots
are replaced by ``<root>`` (but for caliper's process tag in the environment), or the benchmark
stops (what differs is printed).

Prints, for k=1 and for ``k``: median wall and median CPU (user+sys of each side's process
tree: the caliper process and the agents it waited for; the bare CLIs) of both sides, and the
pair-by-pair ratios as median (min–max). Pairs alternate A/B and B/A. ``--smoke`` is the
sameness check and one k=1 pair (a few seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "hello"
SKILLS = EXAMPLE / "skills"
SKILL_NAMES = ("shout", "whisper")
PROMPT = "Say good night quietly."
EXPECTED_SKILL = "whisper"
EXPECTED_ANSWER = "good night, everyone."
SPEC = """\
skills:
  - {skills}/shout
  - {skills}/whisper
tasks:
  - name: a quiet request belongs to the neighbour
    prompt: {prompt}
    activates: [whisper]
"""
GEMINI_MODEL = "gemini-2.5-pro"
GEMINI_SCRIPT = {
    "rules": [
        {
            "when": {"user_text_contains": "quietly"},
            "turns": [
                {"tool_calls": [{"name": "activate_skill", "arguments": {"name": "whisper"}}]},
                {"text": EXPECTED_ANSWER},
            ],
        }
    ]
}


class FloorError(Exception):
    """A turn did not do the work, or the two sides did not run the same turn."""


def _sandbox(root: Path) -> Any:
    """A sandbox in ``root`` laid out as caliper's (``home``, ``work``, ``tmp``)."""
    from caliper.plugin.attempt import AttemptSandbox
    from caliper.plugin.sandbox import minimal_env, real_home

    home, work, tmp = root / "home", root / "work", root / "tmp"
    for folder in (home, work, tmp):
        folder.mkdir()
    env = minimal_env(home=home, tmpdir=tmp)
    return AttemptSandbox(
        root=root, home=home, workdir=work, private=root / "private",
        real_home=real_home(), base_env=env,
    )  # fmt: skip


def claude_turn(cli: Path, root: Path) -> tuple[list[str], dict[str, str], Path]:
    """Seed ``root`` as caliper's claude backend seeds an attempt; (argv, env, cwd)."""
    from caliper_backend_claude import home, invocation, skills

    sandbox = _sandbox(root)
    env = home.build_env(sandbox, home.seed_home(sandbox))
    for name in SKILL_NAMES:
        shutil.copytree(SKILLS / name, skills.skills_root(sandbox.home) / name)
    return invocation.attempt_argv(cli, model=None), env, sandbox.workdir


def gemini_turn(cli: Path, root: Path) -> tuple[list[str], dict[str, str], Path]:
    """Seed ``root`` as caliper's gemini backend seeds an attempt; (argv, env, cwd)."""
    from caliper_backend_gemini import home, invocation, skills

    sandbox = _sandbox(root)
    seeded = home.seed(sandbox)
    for name in SKILL_NAMES:
        shutil.copytree(SKILLS / name, skills.skills_root(sandbox) / name)
    return invocation.attempt_argv(cli, model=GEMINI_MODEL), dict(seeded.env), sandbox.workdir


def bare_turn(
    seed: Callable[[Path, Path], tuple[list[str], dict[str, str], Path]], cli: Path
) -> str:
    """One bare turn in a fresh sandbox (removed afterwards); the CLI's stdout."""
    root = Path(tempfile.mkdtemp(prefix="bare-turn-"))
    try:
        argv, env, cwd = seed(cli, root)
        done = subprocess.run(
            argv, env=env, cwd=cwd, input=PROMPT, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False,
        )  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if done.returncode != 0:
        raise FloorError(f"bare turn exited {done.returncode}: {done.stdout[-2000:]}")
    return done.stdout


def check_claude(stdout: str) -> None:
    """The bare ``claude`` turn listed both skills, loaded ``whisper`` (only) and answered as
    scripted."""
    from caliper_backend_claude import events

    parsed = events.parse_stream(stdout)
    activated = events.activated_skills(parsed, list(SKILL_NAMES))
    listed = sorted(str(s) for s in (parsed.init or {}).get("skills") or ())
    if activated != [EXPECTED_SKILL] or parsed.final_answer != EXPECTED_ANSWER:
        raise FloorError(
            f"bare claude turn did not do the work: activated {activated}, listed {listed}, "
            f"answer {parsed.final_answer!r}"
        )
    if not set(SKILL_NAMES) <= set(listed):
        raise FloorError(f"bare claude turn listed skills {listed}, not {list(SKILL_NAMES)}")


def check_gemini(stdout: str) -> None:
    """The bare ``gemini`` turn loaded ``whisper`` (only) and answered as scripted."""
    from caliper_backend_gemini import backend, events

    run = events.parse_events(stdout)
    activated = backend.loaded_skills(run)
    if activated != [EXPECTED_SKILL] or (run.final_answer or "").strip() != EXPECTED_ANSWER:
        raise FloorError(
            f"bare gemini turn did not do the work: activated {activated}, "
            f"answer {run.final_answer!r}"
        )


def check_caliper(results: Path, k: int) -> None:
    """caliper's saved results: ``k`` attempts without error that activated ``whisper``
    (its activates check passed) and gave the scripted answer."""
    data = json.loads(results.read_text(encoding="utf-8"))
    attempts = [a for task in data["tasks"] for a in task["attempts"]]
    wrong = [
        (a.get("error"), a.get("activated"), a.get("final_answer"))
        for a in attempts
        if a.get("error") is not None
        or a.get("setup_failed")
        or a.get("activated") != [EXPECTED_SKILL]
        or a.get("activation_passed") is not True
        or a.get("final_answer") != EXPECTED_ANSWER
    ]
    if len(attempts) != k or wrong:
        raise FloorError(f"caliper run: {len(attempts)} attempts of {k}; not done: {wrong[:3]}")


OWN_TAG = "CALIPER_PROCESS_TAG"
"""The one variable only caliper's side has: the tag caliper finds its agents' processes by."""
RECORDER = """#!/bin/sh
# Records one run of {cli} (argv, env, cwd, stdin, the sandbox's files) in {out}, then runs it.
d=$(mktemp -d {out}/turn-XXXXXX)
cat > "$d/stdin"
for a in "$@"; do printf '%s\\n' "$a"; done > "$d/argv"
env > "$d/env"
pwd > "$d/cwd"
echo "$HOME" > "$d/home"
(cd "$HOME/.." && find . -type f | sort | while read -r f; do
  printf '== %s\\n' "$f"; cat "$f"; printf '\\n'; done) > "$d/files"
exec {cli} "$@" < "$d/stdin"
"""


def read_recording(folder: Path) -> dict[str, Any]:
    """One recorded turn, its sandbox root replaced by ``<root>`` everywhere."""
    root = str(Path((folder / "home").read_text().strip()).parent)

    def norm(name: str) -> str:
        return (folder / name).read_text().replace(root, "<root>")

    env = dict(line.split("=", 1) for line in norm("env").splitlines() if "=" in line)
    return {
        "argv": norm("argv").splitlines(),
        "env": env,
        "cwd": norm("cwd").strip(),
        "stdin": norm("stdin"),
        "files": norm("files"),
    }


def prompt_turn(out: Path) -> dict[str, Any]:
    """The recorded turn that carried the task prompt (caliper also asks versions, login)."""
    found = [t for t in sorted(out.iterdir()) if (t / "stdin").read_text() == PROMPT]
    if len(found) != 1:
        raise FloorError(f"{len(found)} recorded turns carried the prompt in {out}")
    return read_recording(found[0])


def same_turn_check(
    run_caliper: Callable[..., object],
    seed: Callable[[Path, Path], tuple[list[str], dict[str, str], Path]],
    check: Callable[[str], None],
    cli: Path,
    variable: str,
    scratch: Path,
) -> None:
    """One turn of each side through the recorder; stop when the two differ."""
    recordings = {}
    for side in ("caliper", "bare"):
        out = scratch / f"recorded-{side}"
        out.mkdir()
        wrapper = scratch / f"record-{side}"
        wrapper.write_text(RECORDER.format(cli=shlex.quote(str(cli)), out=shlex.quote(str(out))))
        wrapper.chmod(0o755)
        if side == "caliper":
            run_caliper(1, {variable: str(wrapper)})
        else:
            check(bare_turn(seed, wrapper))
        recordings[side] = prompt_turn(out)
    ours, bare = recordings["caliper"], recordings["bare"]
    differ = []
    for key in ("argv", "cwd", "stdin", "files"):
        if ours[key] != bare[key]:
            differ.append(f"{key}: caliper {ours[key]!r}\n  bare {bare[key]!r}")
    for name in sorted((set(ours["env"]) | set(bare["env"])) - {OWN_TAG}):
        if ours["env"].get(name) != bare["env"].get(name):
            differ.append(f"env {name}: caliper {ours['env'].get(name)!r}, bare "
                          f"{bare['env'].get(name)!r}")  # fmt: skip
    if differ:
        raise FloorError("the bare turn is not caliper's turn:\n" + "\n".join(differ))
    print(
        f"same turn: argv, {len(ours['env'])} environment variables, working folder, stdin and "
        f"{sum(line.startswith('== ') for line in ours['files'].splitlines())} sandbox files "
        "equal (sandbox roots aside)",
        flush=True,
    )


def children_cpu() -> float:
    """User+sys seconds of this process's finished (waited-for) descendants."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def spread(values: list[float]) -> str:
    return f"{median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def run_bare(
    seed: Callable[[Path, Path], tuple[list[str], dict[str, str], Path]],
    cli: Path,
    k: int,
    workers: int,
) -> list[str]:
    """``k`` bare turns, ``workers`` at a time; their stdouts."""
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda _: bare_turn(seed, cli), range(k)))


def paired(
    sides: dict[str, Callable[[], object]], pairs: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Each side once a pair, A/B then B/A; (wall seconds, CPU seconds) of each side by pair."""
    walls: dict[str, list[float]] = {side: [] for side in sides}
    cpus: dict[str, list[float]] = {side: [] for side in sides}
    order = list(sides)
    for i in range(pairs):
        for side in order if i % 2 == 0 else order[::-1]:
            cpu, started = children_cpu(), time.perf_counter()
            sides[side]()
            walls[side].append(time.perf_counter() - started)
            cpus[side].append(children_cpu() - cpu)
    return walls, cpus


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--backend", choices=("claude", "gemini"), default="claude")
    parser.add_argument("--smoke", action="store_true", help="sameness check and one k=1 pair")
    parser.add_argument(
        "--caliper",
        type=Path,
        default=ROOT / ".venv" / "bin" / "caliper",
        help="the caliper console script to measure (default: this checkout's)",
    )
    args = parser.parse_args()
    gemini = args.backend == "gemini"
    from caliper.testing import agent_clis
    from caliper.testing.offline import loopback_only

    if not loopback_only()[0] and os.environ.get("CALIPER_OFFLINE") is None:
        wrapper = [sys.executable, "-m", "caliper.testing.offline", "--"]
        return subprocess.call([*wrapper, sys.executable, *sys.argv])
    from caliper.testing.model_server import ModelServer

    ks = (1,) if args.smoke else (1, args.k)
    pairs = 1 if args.smoke else args.pairs
    cli = agent_clis.bin_path("gemini" if gemini else "claude")
    seed = gemini_turn if gemini else claude_turn
    check = check_gemini if gemini else check_claude
    caliper = args.caliper
    with (
        ModelServer(GEMINI_SCRIPT if gemini else EXAMPLE / "scripted-model.yaml") as server,
        tempfile.TemporaryDirectory(prefix="caliper-real-cli-") as temp,
    ):
        # the environment both sides start from; the backends pass on what they forward
        os.environ.update(
            {
                "HOME": temp,
                "ANTHROPIC_BASE_URL": server.url,
                "ANTHROPIC_API_KEY": "sk-bench-not-a-real-key",
                "GOOGLE_GEMINI_BASE_URL": server.url,
                "GEMINI_API_KEY": "gm-bench-key",
                "PATH": f"{agent_clis.shim_dir()}{os.pathsep}{os.environ.get('PATH', '')}",
            }
        )
        engine = f"gemini:{GEMINI_MODEL}" if gemini else "claude-code"
        spec = Path(temp) / "floor.eval.yaml"
        spec.write_text(SPEC.format(skills=SKILLS, prompt=PROMPT))
        results = Path(temp) / "out.json"
        errors = Path(temp) / "caliper.stderr"

        def run_caliper(k: int, extra: dict[str, str] | None = None) -> None:
            argv = [str(caliper), "run", str(spec), "--k", str(k), "--workers",
                    str(args.workers), "--model", engine, "--output", str(results)]  # fmt: skip
            with errors.open("w") as stderr:
                done = subprocess.run(
                    argv, env={**os.environ, **(extra or {})}, cwd=temp, stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL, stderr=stderr, check=False,
                )  # fmt: skip
            if not results.is_file():
                raise FloorError(f"caliper run exited {done.returncode}: {errors.read_text()}")
            check_caliper(results, k)
            results.unlink()

        scratch = Path(temp) / "record"
        scratch.mkdir()
        variable = "GEMINI_CLI_PATH" if gemini else "CLAUDE_CLI_PATH"
        same_turn_check(run_caliper, seed, check, cli, variable, scratch)
        print(
            "| k | workers | caliper wall s | bare wall s | wall caliper / bare "
            "| caliper CPU s | bare CPU s | CPU caliper / bare |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for k in ks:
            outputs: list[str] = []
            sides = {
                "ours": lambda k=k: run_caliper(k),
                "bare": lambda k=k, out=outputs: out.extend(run_bare(seed, cli, k, args.workers)),
            }
            walls, cpus = paired(sides, pairs)
            for stdout in outputs:
                check(stdout)
            wall_ratio = [a / b for a, b in zip(walls["ours"], walls["bare"], strict=True)]
            cpu_ratio = [a / b for a, b in zip(cpus["ours"], cpus["bare"], strict=True)]
            print(
                f"| {k} | {args.workers} | {median(walls['ours']):.2f} | "
                f"{median(walls['bare']):.2f} | {spread(wall_ratio)} | "
                f"{median(cpus['ours']):.2f} | {median(cpus['bare']):.2f} | {spread(cpu_ratio)} |",
                flush=True,
            )
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except FloorError as exc:
        print(f"real_cli: {exc}", file=sys.stderr)
        sys.exit(1)
