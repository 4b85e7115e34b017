from pathlib import Path

assert Path("out.txt").exists(
