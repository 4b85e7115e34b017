"""PyYAML imported through ``caliper.spec.pyyaml``: its reader's non-printable pattern is the
listed one, it matches exactly the characters PyYAML's own pattern matches, and a spec with a
control character is still refused by the pure-Python reader."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from caliper.spec import pyyaml
from caliper.spec.yamldoc import parse_yaml

FRESH_IMPORT = (
    "import re\n"
    "compile_before = re.compile\n"
    "import caliper.spec.yamldoc, yaml\n"
    "from caliper.spec import pyyaml\n"
    "print(yaml.reader.Reader.NON_PRINTABLE.pattern == pyyaml.NON_PRINTABLE_LISTED)\n"
    "print(re.compile is compile_before)\n"
)


def test_the_listed_pattern_matches_the_same_characters_as_pyyamls() -> None:
    every_character = "".join(map(chr, range(sys.maxunicode + 1)))
    theirs = re.compile(pyyaml.PYYAML_NON_PRINTABLE).findall(every_character)
    ours = re.compile(pyyaml.NON_PRINTABLE_LISTED).findall(every_character)
    assert ours == theirs
    assert len(theirs) == 2111  # the controls, DEL, the surrogates, U+FFFE and U+FFFF


def test_pyyamls_own_pattern_is_the_one_listed() -> None:
    source = Path(pyyaml.yaml.reader.__file__).read_text(encoding="utf-8")
    assert "NON_PRINTABLE = re.compile('" in source
    assert pyyaml.yaml.reader.Reader.NON_PRINTABLE.search("ok\x07") is not None


def test_a_fresh_import_uses_the_listed_pattern_and_restores_re_compile() -> None:
    done = subprocess.run(
        [sys.executable, "-c", FRESH_IMPORT], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["True", "True"]


def test_a_control_character_in_a_spec_is_still_refused(tmp_path: Path) -> None:
    document, problems = parse_yaml(tmp_path / "bad.eval.yaml", "tasks:\n  - name: a\x07b\n")
    assert document is None
    assert [p.message for p in problems] == [
        "YAML does not allow the control character U+0007 here"
    ]
