"""The ``assert`` judge: Python code, inline or in a file, run after each attempt.

The value is either inline code (``assert: |`` block) or, when it is a single line ending in
``.py``, a file relative to the spec (read once, when the spec is loaded at the start of a
run). The code runs with the interpreter caliper runs on, in the attempt's working directory,
with ``CALIPER_WORKDIR``, ``CALIPER_SPEC_DIR`` and ``CALIPER_TRANSCRIPT`` (a JSON file of the
attempt's normalised transcript, :func:`caliper.plugin.tools.transcript_data`) set, in a
child forked from a warm server (:mod:`caliper.default_plugins.warm_assert`) or, where that
is unavailable, a fresh interpreter. Exit without an exception passes; a failed ``assert``
fails with its message as the reason.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import caliper
from caliper.plugin.judge import Judge, ValueProblem
from caliper.spec.fields import type_name
from caliper.system.textsafe import well_formed

if TYPE_CHECKING:
    from caliper.plugin.verdict import JudgeContext, Verdict

RUNNER = Path(__file__).with_name("_assert_runner.py")
OUTPUT_TAIL = 2000


def is_file_reference(value: str) -> bool:
    """Whether an ``assert:`` value names a script (one line ending in ``.py``)."""
    text = value.strip()
    return "\n" not in text and text.endswith(".py")


def _compile_problem(source: str, filename: str) -> str | None:
    try:
        compile(source, filename, "exec")
    except SyntaxError as exc:
        where = f"line {exc.lineno}" if exc.lineno else "somewhere"
        text = f": {exc.text.strip()}" if exc.text and exc.text.strip() else ""
        return f"{where}: {exc.msg}{text}"
    except ValueError as exc:  # e.g. null bytes
        return str(exc)
    return None


def _tail(text: str) -> str:
    return text if len(text) <= OUTPUT_TAIL else "…" + text[-OUTPUT_TAIL:]


class AssertJudge(Judge):
    """Runs the task's Python assertion in a child process and reads how it ended."""

    key = "assert"
    summary = "Python code run after the attempt (inline, or a .py file next to the spec)"
    scores_outcome = True
    uses_llm = False

    def __init__(self) -> None:
        self._sources: dict[Path, str] = {}
        """Assert files as read when the spec was validated (the start of a run), so the
        run checks every attempt with the same code even if the file changes or goes away."""

    def validate(
        self, value: Any, *, spec_dir: Path, declared_skills: tuple[str, ...]
    ) -> list[ValueProblem]:
        if not isinstance(value, str) or not value.strip():
            return [
                ValueProblem(
                    "expected Python code or the path of a .py file, found "
                    f"{'an empty string' if isinstance(value, str) else type_name(value)}"
                )
            ]
        if is_file_reference(value):
            path = spec_dir / value.strip()
            if not path.is_file():
                why = "is a folder" if path.is_dir() else "does not exist"
                return [
                    ValueProblem(
                        f"assert file {value.strip()} {why} (paths are relative to the spec's "
                        "folder)"
                    )
                ]
            try:
                source = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                return [ValueProblem(f"assert file {value.strip()} cannot be read: {exc}")]
            problem = _compile_problem(source, str(path))
            if problem:
                return [ValueProblem(f"assert file {value.strip()} does not compile: {problem}")]
            self._sources[path.resolve()] = source
            return []
        problem = _compile_problem(value, "<assert>")
        if problem:
            return [ValueProblem(f"the assert code does not compile: {problem}")]
        return []

    def check(self, context: JudgeContext) -> Verdict:
        """Run the assertion in a fresh interpreter; its code, result and transcript files go
        in a folder inside the attempt's sandbox TMPDIR, so a killed run leaves them where the
        ledger removes the sandbox, not in the system temp folder."""
        import tempfile  # here, not at import: `caliper validate` never runs a check

        from caliper.default_plugins import warm_assert
        from caliper.plugin.verdict import Verdict
        from caliper.system.process import run_process

        value = str(context.value)
        if is_file_reference(value):
            script = context.spec_dir / value.strip()
            source = self._sources.get(script.resolve())
            if source is None:
                try:
                    source = script.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    return Verdict(passed=None, error=f"cannot read assert file {script}: {exc}")
            display, import_dir = str(script), str(script.parent)
        else:
            source, display, import_dir = value, "<assert>", str(context.spec_dir)
        env = dict(os.environ)
        env.update(context.agent_env)  # the agent's HOME and PATH, so checks see what it saw
        env.update(
            CALIPER_WORKDIR=str(context.workdir),
            CALIPER_SPEC_DIR=str(context.spec_dir),
            CALIPER_TASK_NAME=context.task_name,
            PYTHONDONTWRITEBYTECODE="1",
            PYTHONIOENCODING="utf-8",
        )
        with tempfile.TemporaryDirectory(
            prefix="caliper-assert-", dir=_scratch_parent(context)
        ) as temp:
            code_file = Path(temp) / "assertion.py"
            result_file = Path(temp) / "result.json"
            code_file.write_text(source, encoding="utf-8")
            env["CALIPER_TRANSCRIPT"] = str(_write_transcript(Path(temp), context))
            done = run_process(
                [
                    sys.executable,
                    str(RUNNER),
                    str(code_file),
                    str(result_file),
                    display,
                    import_dir,
                ],
                env=env,
                cwd=context.workdir,
                timeout=context.timeout,
                starter=warm_assert.starter(),
            )
            outcome = _read_result(result_file)
        details = {"stdout": _tail(done.stdout), "stderr": _tail(done.stderr)}
        if done.timed_out:
            return Verdict(
                passed=None, error=f"assert timed out after {context.timeout:g}s", details=details
            )
        if done.interrupted:
            return Verdict(passed=None, error="assert was interrupted", details=details)
        if outcome is None:
            if done.returncode == 127 and not done.stdout:
                return Verdict(passed=None, error=done.stderr.strip(), details=details)
            last = done.stderr.strip().splitlines()[-1:] or ["no output"]
            return Verdict(
                passed=False,
                reason=f"the assertion process ended with exit code {done.returncode}: {last[0]}",
                details=details,
            )
        return _verdict(outcome, details)


def _scratch_parent(context: JudgeContext) -> str | None:
    """The sandbox TMPDIR the agent ran with (recreated if the agent removed it), where the
    assert's files go; ``None`` (the system temp folder) when the context has no TMPDIR."""
    tmpdir = context.agent_env.get("TMPDIR")
    if not tmpdir:
        return None
    folder = Path(tmpdir)
    try:
        folder.mkdir(exist_ok=True)
    except OSError:
        return None
    return str(folder)


def _write_transcript(folder: Path, context: JudgeContext) -> Path:
    """The attempt's normalised transcript as ``transcript.json`` in ``folder``, mode 0600
    (tool outputs may hold what the agent read); lone surrogates (text a model sent that is
    not valid Unicode) become U+FFFD, as in saved results."""
    import json

    from caliper.plugin.private_files import write_private
    from caliper.plugin.tools import transcript_data

    data = transcript_data(context.transcript, context.tools)
    text = well_formed(json.dumps(data, ensure_ascii=False, default=str))
    return write_private(folder / "transcript.json", text)


def _read_result(path: Path) -> dict[str, Any] | None:
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _verdict(outcome: dict[str, Any], details: dict[str, Any]) -> Verdict:
    from caliper.plugin.verdict import Verdict

    status = outcome.get("status")
    if status == "pass":
        return Verdict(passed=True, details=details)
    message = str(outcome.get("message") or "")
    line, code = outcome.get("line"), outcome.get("code")
    where = f" (line {line}: {code})" if line and code else (f" (line {line})" if line else "")
    if line:
        details = {**details, "line": line}
    if status == "assertion":
        reason = message or f"assertion failed{where}"
    elif status == "exit":
        reason = f"the assertion {message}"
    else:
        reason = f"{message}{where}"
    return Verdict(passed=False, reason=reason, details=details)


@caliper.hookimpl
def register_judges(register: Any) -> None:
    """Register the built-in ``assert`` judge."""
    register(AssertJudge())
