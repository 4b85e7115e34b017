"""Runs one ``assert:`` in a child Python and writes what happened to a JSON file.

Usage: ``python _assert_runner.py CODE_FILE RESULT_FILE DISPLAY_NAME IMPORT_DIR``. The code runs
as ``__main__``; an ``AssertionError`` is a failure whose message is the reason, any other
exception a failure named after its line, ``sys.exit(0)`` a pass. Kept free of caliper imports
so it starts fast and cannot be broken by the package it checks.
"""

import json
import linecache
import sys
import traceback


def _where(exc, display_name):
    """(line number, source line) of the deepest frame in the user's code."""
    found = (None, None)
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == display_name:
            found = (frame.lineno, (frame.line or "").strip())
    if found[0] is None and isinstance(exc, SyntaxError) and exc.filename == display_name:
        found = (exc.lineno, (exc.text or "").strip())
    return found


def main():
    code_file, result_file, display_name, import_dir = sys.argv[1:5]
    with open(code_file, encoding="utf-8") as handle:
        source = handle.read()
    linecache.cache[display_name] = (len(source), None, source.splitlines(True), display_name)
    sys.argv = [display_name]
    sys.path.insert(0, import_dir)
    namespace = {"__name__": "__main__", "__file__": display_name, "__builtins__": __builtins__}
    result = {"status": "pass"}
    try:
        exec(compile(source, display_name, "exec"), namespace)
    except AssertionError as exc:
        line, text = _where(exc, display_name)
        result = {"status": "assertion", "message": str(exc), "line": line, "code": text}
    except SystemExit as exc:
        if exc.code not in (None, 0):
            result = {"status": "exit", "message": f"exited with status {exc.code}"}
    except BaseException as exc:
        line, text = _where(exc, display_name)
        traceback.print_exc()
        message = f"{type(exc).__name__}: {exc}".rstrip(": ")
        result = {"status": "error", "message": message, "line": line, "code": text}
    sys.stdout.flush()
    sys.stderr.flush()
    with open(result_file, "w", encoding="utf-8") as handle:
        json.dump(result, handle)
    return 0 if result["status"] == "pass" else 1


if __name__ == "__main__":
    sys.exit(main())
