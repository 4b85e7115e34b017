"""The real-CLI floor: caliper on the pinned ``claude`` CLI against the bare CLI doing the same.

Run from the repository root (it re-enters the loopback-only namespace itself)::

    .venv/bin/python benchmarks/harness/real_cli.py [--k 10] [--workers 2]

Both sides talk to the same scripted model server (``caliper.testing.model_server``, the
demo's script): caliper runs ``examples/hello``'s activates-only task ``k`` times on
``workers`` workers; the bare side runs ``claude -p … --output-format stream-json`` with the
same prompt ``k`` times, ``workers`` at a time, each in a fresh HOME. Prints both walls and
the ratio, for k=1 (one attempt) and for ``k``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROMPT = "Say good night quietly."
SPEC = """\
skills:
  - {skills}/shout
  - {skills}/whisper
tasks:
  - name: a quiet request belongs to the neighbour
    prompt: {prompt}
    activates: [whisper]
"""


def bare_call(claude: Path, env: dict[str, str]) -> None:
    """One bare ``claude -p`` turn in a fresh HOME and working folder."""
    with tempfile.TemporaryDirectory(prefix="bare-claude-") as home:
        work = Path(home) / "work"
        work.mkdir()
        subprocess.run(
            [
                str(claude),
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--dangerously-skip-permissions",
                PROMPT,
            ],
            env={**env, "HOME": home},
            cwd=work,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    from caliper.testing import agent_clis
    from caliper.testing.offline import loopback_only

    if not loopback_only()[0] and os.environ.get("CALIPER_OFFLINE") is None:
        wrapper = [sys.executable, "-m", "caliper.testing.offline", "--"]
        return subprocess.call([*wrapper, sys.executable, *sys.argv])
    from caliper.testing.model_server import ModelServer

    example = ROOT / "examples" / "hello"
    claude = agent_clis.bin_path("claude")
    caliper = ROOT / ".venv" / "bin" / "caliper"
    with (
        ModelServer(example / "scripted-model.yaml") as server,
        tempfile.TemporaryDirectory(prefix="caliper-real-cli-") as temp,
    ):
        env = {
            **os.environ,
            "HOME": temp,
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "sk-bench-not-a-real-key",
            "PATH": f"{agent_clis.shim_dir()}{os.pathsep}{os.environ.get('PATH', '')}",
            # what caliper's claude backend sets too: quiet, and allowed to run as root
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
        }
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            env["IS_SANDBOX"] = "1"
        spec = Path(temp) / "floor.eval.yaml"
        spec.write_text(SPEC.format(skills=example / "skills", prompt=PROMPT))
        print("| k | workers | caliper s | bare CLI s | caliper / bare |")
        print("| --- | --- | --- | --- | --- |")
        for k in (1, args.k):
            ratios, ours, bare = [], [], []
            for i in range(args.pairs):

                def run_ours(k=k) -> float:
                    started = time.perf_counter()
                    subprocess.run(
                        [
                            str(caliper),
                            "run",
                            str(spec),
                            "--k",
                            str(k),
                            "--workers",
                            str(args.workers),
                            "--model",
                            "claude-code",
                            "--output",
                            str(Path(temp) / "out.json"),
                        ],
                        env=env,
                        cwd=temp,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        check=True,
                    )
                    return time.perf_counter() - started

                def run_bare(k=k) -> float:
                    started = time.perf_counter()
                    with ThreadPoolExecutor(args.workers) as pool:
                        list(pool.map(lambda _: bare_call(claude, env), range(k)))
                    return time.perf_counter() - started

                if i % 2 == 0:  # A/B, then B/A
                    a = run_ours()
                    b = run_bare()
                else:
                    b = run_bare()
                    a = run_ours()
                ours.append(a)
                bare.append(b)
                ratios.append(a / b)
            ratios.sort()
            print(
                f"| {k} | {args.workers} | {sorted(ours)[len(ours) // 2]:.2f} | "
                f"{sorted(bare)[len(bare) // 2]:.2f} | {ratios[len(ratios) // 2]:.2f} "
                f"({ratios[0]:.2f}–{ratios[-1]:.2f}) |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
