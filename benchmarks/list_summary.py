"""``caliper list SPEC`` over 9 runs of 5,000 attempts, with and without the per-run summaries.

Without them (deleted first) list decodes and scores every attempt of every run, as it did
before the summaries; the next list reads them. Wall and CPU (user+sys of the child process)
per pair. Run: ``.venv/bin/python benchmarks/list_summary.py [SCRATCH]``.
"""

import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "harness"))
from bench import blow_up

from caliper_fakeagent.harness import CALIPER, Workspace

root = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/caliper-list-bench")
shutil.rmtree(root, ignore_errors=True)
root.mkdir()
space = Workspace.create(root)
spec = space.spec("""\
    tasks:
      - name: t
        prompt: "fake: say all done"
        expect: "The agent says it is done. fake-judge: pass"
    """)
done = space.run(spec, "--k", "10", "--judge-model", "fake")
src = done.results_path
folder = src.parent
for n in range(9):
    blow_up(src, folder / f"2026-01-0{n + 1}T00-00-00Z.json", 500, "tasks", "name", n)
src.unlink()
(folder / f".{src.name}.summary").unlink(missing_ok=True)


def cpu_run(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(argv, cwd=root, env=space.env(), capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert out.returncode == 0, out.stderr
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out.stdout


rows = []
for i in range(3):
    for p in folder.glob(".*.summary"):
        p.unlink()
    cold = cpu_run([str(CALIPER), "list", "demo", "--format", "json"])
    warm = cpu_run([str(CALIPER), "list", "demo", "--format", "json"])
    assert json.loads(cold[2]) == json.loads(warm[2])
    rows.append((cold[0], cold[1], warm[0], warm[1]))
    print(
        f"pair {i}: no summary {cold[0]:.2f}s wall {cold[1]:.2f}s cpu"
        f" | summary {warm[0]:.2f}s wall {warm[1]:.2f}s cpu"
        f" | ratio wall {warm[0] / cold[0]:.2f} cpu {warm[1] / cold[1]:.2f}",
        flush=True,
    )
print("attempts per run:", json.loads(cold[2])[0]["attempts"])
