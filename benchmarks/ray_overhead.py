"""The same 40-attempt run on ``--executor local --workers 2`` and on a two-node Ray cluster.

    python -m caliper.testing.offline -- .venv/bin/python benchmarks/ray_overhead.py [--rounds 3]

Starts a two-node Ray cluster on 127.0.0.1 (one CPU each, like ``tests/executor_ray``), then
times whole ``caliper run`` processes of one spec, 4 tasks x k=10 with the fake agent (the
test-only ``fake`` backend: a real subprocess per attempt that sleeps 0.5 s, writes a file and
answers; an ``assert:`` checks it), alternating local and Ray. It prints the wall times
(median of the rounds) and the overhead per attempt:
``(ray wall - local wall) x workers / attempts``, i.e. how much longer each attempt held its
slot on Ray, connection, bundle and per-node pre-flight included. The same pair at k=1
(4 attempts) separates the fixed start-up (connect, bundle, pre-flight) from the marginal cost
of one more attempt. Nothing is asserted.
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
      path = os.path.join(os.environ['CALIPER_WORKDIR'], 'out.txt')
      assert open(path).read().strip() == 'done-{n}'
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
    walls: dict[tuple[str, int], list[float]] = {}
    ray_flags = ["--executor", "ray", "--ray-address", cluster.address]
    try:
        for _ in range(rounds):
            for k in (K, 1):
                for name, flags in (("local", ["--executor", "local"]), ("ray", ray_flags)):
                    args = [*base, *flags, "--k", str(k)]  # the last --k wins
                    walls.setdefault((name, k), []).append(_time(args, project, _env(root, name)))
    finally:
        cluster.stop()
    median = {key: statistics.median(values) for key, values in walls.items()}
    attempts, few = TASKS * K, TASKS
    extra_many = median[("ray", K)] - median[("local", K)]
    extra_few = median[("ray", 1)] - median[("local", 1)]
    per_attempt_ms = extra_many * WORKERS / attempts * 1000
    marginal_ms = (extra_many - extra_few) * WORKERS / (attempts - few) * 1000
    print(f"fake agent (0.5 s per attempt), --workers {WORKERS}, {rounds} rounds, median walls:")
    for (name, k), values in sorted(walls.items()):
        shown = ", ".join(f"{v:.2f}" for v in values)
        print(f"  {name:5} {TASKS * k:3} attempts: {median[(name, k)]:6.2f} s  ({shown})")
    print(f"overhead per attempt on Ray, {attempts} attempts, start-up included: "
          f"{per_attempt_ms:.0f} ms")  # fmt: skip
    print(f"fixed start-up on Ray (connect, bundle, pre-flight): about {extra_few:.1f} s")
    print(f"marginal overhead of one more attempt on Ray: {marginal_ms:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
