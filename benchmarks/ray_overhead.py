"""The same 40-attempt run on ``--executor local --workers 2`` and on a two-node Ray cluster.

    python -m caliper.testing.offline -- .venv/bin/python benchmarks/ray_overhead.py [--rounds 3]

Starts a two-node Ray cluster on 127.0.0.1 (one CPU each, like ``tests/executor_ray``), then
times whole ``caliper run`` processes of one spec, 4 tasks x k=10 with the fake agent (the
test-only ``fake`` backend: a real subprocess per attempt that sleeps 0.5 s, writes a file and
answers; an ``assert:`` checks it), alternating local and Ray. It prints the wall times
(median of the rounds) and the overhead per attempt:
``(ray wall - local wall) x workers / attempts``, i.e. how much longer each attempt held its
slot on Ray, connection, bundle and per-node pre-flight included. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "executor_ray"))

from ray_cluster import RayCluster  # noqa: E402

BIN = Path(sys.executable).parent
TASKS = 4
K = 10
WORKERS = 2
SPEC = """\
tasks:
"""
TASK = """\
  - name: t{n}
    prompt: |
      fake: sleep 0.5
      fake: write out.txt done-{n}
      fake: say done
    assert: |
      import os
      assert open(os.path.join(os.environ['CALIPER_WORKDIR'], 'out.txt')).read().strip() == 'done-{n}'
"""


def _env(root: Path, name: str) -> dict[str, str]:
    sandboxes = root / f"sandboxes-{name}"
    sandboxes.mkdir(exist_ok=True)
    env = dict(os.environ)
    env.update(
        HOME=str(root / "home"),
        CALIPER_TMPDIR=str(sandboxes),
        CALIPER_BUNDLE_DIR=str(root / f"bundles-{name}"),
        FAKE_AGENT_CLI_PATH=str(BIN / "fake-agent"),
        CALIPER_TEST_PLUGINS="1",
        LANG="C.UTF-8",
    )
    return env


def _time(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"caliper exited {done.returncode}:\n{done.stderr[-3000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    root = Path(tempfile.mkdtemp(prefix="caliper-ray-bench-"))
    (root / "home").mkdir()
    project = root / "project"
    project.mkdir()
    spec = project / "bench.eval.yaml"
    spec.write_text(SPEC + "".join(textwrap.dedent(TASK).format(n=n) for n in range(TASKS)))
    cluster = RayCluster(root / "cluster")
    (root / "cluster").mkdir()
    started = time.perf_counter()
    cluster.start(_env(root, "a"), _env(root, "b"))
    print(f"two-node cluster up in {time.perf_counter() - started:.1f} s")
    base = [str(BIN / "caliper"), "run", str(spec), "--model", "fake", "--k", str(K),
            "--workers", str(WORKERS), "--retries", "0"]  # fmt: skip
    walls: dict[str, list[float]] = {"local": [], "ray": []}
    try:
        for _ in range(rounds):
            walls["local"].append(
                _time([*base, "--executor", "local"], project, _env(root, "driver"))
            )
            walls["ray"].append(
                _time([*base, "--executor", "ray", "--ray-address", cluster.address],
                      project, _env(root, "driver"))  # fmt: skip
            )
    finally:
        cluster.stop()
    attempts = TASKS * K
    local, ray = statistics.median(walls["local"]), statistics.median(walls["ray"])
    overhead_ms = (ray - local) * WORKERS / attempts * 1000
    print(f"{attempts} attempts (fake agent, 0.5 s each), --workers {WORKERS}, {rounds} rounds")
    print("local walls: " + ", ".join(f"{w:.2f}" for w in walls["local"]) + " s")
    print("ray walls:   " + ", ".join(f"{w:.2f}" for w in walls["ray"]) + " s")
    print(f"median wall: local {local:.2f} s, ray {ray:.2f} s")
    print(f"overhead per attempt on Ray: {overhead_ms:.0f} ms (start-up included)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
