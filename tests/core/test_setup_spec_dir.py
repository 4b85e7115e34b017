"""A task's ``setup:`` and ``cleanup:`` get ``CALIPER_SPEC_DIR`` (the spec's folder), so a spec
can name its own files by a path relative to itself: through the real ``caliper`` script."""

from __future__ import annotations

from pathlib import Path

from caliper_fakeagent.harness import Workspace


def test_setup_and_cleanup_see_the_specs_folder(tmp_path: Path) -> None:
    space = Workspace.create(tmp_path)
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs" / "form one.pdf").write_text("%PDF form")
    spec = space.spec(
        """\
        tasks:
          - name: t
            setup: cp "$CALIPER_SPEC_DIR"/'inputs/form one.pdf' .
            cleanup: echo "$CALIPER_SPEC_DIR" > "$CALIPER_SPEC_DIR"/cleanup-saw.txt
            prompt: "fake: say hi"
            assert: |
              from pathlib import Path
              assert Path("form one.pdf").read_text() == "%PDF form", "not copied"
        """
    )
    run = space.run(spec, "--k", "1")
    assert run.returncode == 0, run.stderr
    (attempt,) = run.attempts("t")
    assert attempt["outcome"] == "pass", attempt
    assert (tmp_path / "cleanup-saw.txt").read_text().strip() == str(tmp_path)
