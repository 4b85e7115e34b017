"""The real-CLI floor: caliper on a pinned agent CLI against the bare CLI doing the same.

Run from the repository root (it re-enters the loopback-only namespace itself)::

    .venv/bin/python benchmarks/harness/real_cli.py [--k 10] [--workers 2] [--backend gemini]

``--backend claude`` (the default) drives the pinned ``claude``; ``--backend gemini`` the
pinned ``gemini`` (Gemini CLI), whose bare side runs ``gemini -o stream-json --skip-trust
--approval-mode yolo`` with the settings caliper's gemini backend writes (API-key auth, one
attempt, telemetry off) and the same model, answering the same activation turn.

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


GEMINI_MODEL = "gemini-2.5-pro"
GEMINI_SCRIPT = {
    "rules": [
        {
            "when": {"user_text_contains": "quietly"},
            "turns": [
                {"tool_calls": [{"name": "activate_skill", "arguments": {"name": "whisper"}}]},
                {"text": "good night, everyone."},
            ],
        }
    ]
}
GEMINI_SETTINGS = (
    '{"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"maxAttempts": 1},'
    ' "telemetry": {"enabled": false}, "privacy": {"usageStatisticsEnabled": false}}'
)


def bare_gemini(gemini: Path, env: dict[str, str], skills: Path) -> None:
    """One bare ``gemini`` turn in a fresh home (the two skills installed) and working folder."""
    import shutil

    with tempfile.TemporaryDirectory(prefix="bare-gemini-") as home:
        work = Path(home) / "work"
        work.mkdir()
        folder = Path(home) / ".gemini"
        shutil.copytree(skills, folder / "skills")
        (folder / "settings.json").write_text(GEMINI_SETTINGS)
        subprocess.run(
            [str(gemini), "-o", "stream-json", "--skip-trust", "--approval-mode", "yolo",
             "--model", GEMINI_MODEL],
            env={**env, "HOME": home, "GEMINI_CLI_HOME": home},
            cwd=work,
            input=PROMPT,
            text=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--backend", choices=("claude", "gemini"), default="claude")
    args = parser.parse_args()
    gemini = args.backend == "gemini"
    from caliper.testing import agent_clis
    from caliper.testing.offline import loopback_only

    if not loopback_only()[0] and os.environ.get("CALIPER_OFFLINE") is None:
        wrapper = [sys.executable, "-m", "caliper.testing.offline", "--"]
        return subprocess.call([*wrapper, sys.executable, *sys.argv])
    from caliper.testing.model_server import ModelServer

    example = ROOT / "examples" / "hello"
    claude = agent_clis.bin_path("gemini" if gemini else "claude")
    caliper = ROOT / ".venv" / "bin" / "caliper"
    with (
        ModelServer(GEMINI_SCRIPT if gemini else example / "scripted-model.yaml") as server,
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
        if gemini:  # what caliper's gemini backend sets too
            env.update(
                {"GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": "gm-bench-key",
                 "GEMINI_CLI_NO_RELAUNCH": "true", "GEMINI_CLI_TRUST_WORKSPACE": "true",
                 "NO_COLOR": "1"}
            )  # fmt: skip
        engine = f"gemini:{GEMINI_MODEL}" if gemini else "claude-code"
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
                            engine,
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
                        if gemini:
                            skills = example / "skills"
                            calls = pool.map(lambda _: bare_gemini(claude, env, skills), range(k))
                        else:
                            calls = pool.map(lambda _: bare_call(claude, env), range(k))
                        list(calls)
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
