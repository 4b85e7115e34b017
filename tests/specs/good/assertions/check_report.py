"""Checks the report the agent wrote (an example assert file)."""

from pathlib import Path

report = Path("report.md")
assert report.exists(), "report.md was not created"
assert "Summary" in report.read_text(), "report.md has no Summary section"
