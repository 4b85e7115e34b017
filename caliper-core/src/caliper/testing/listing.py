"""Checks of a backend's ``skill_listing_budget`` against its real CLI.

:func:`check_listing_budget` installs enough skills to stay just under, or go just over, the
backend's figure, runs ``caliper run`` through the conformance kit and reads what the CLI sent
the model: under it every description arrives whole and no warning is printed; over it the
run header warns and at least one description is no longer whole.
"""

from __future__ import annotations

import re

from caliper.testing.conformance_kit import ConformanceKit, ok_run

DESCRIPTION_LENGTH = 250


def description_for(index: int) -> str:
    """A description of ``DESCRIPTION_LENGTH`` characters ending in a marker (``E``)."""
    head = f"Handles case {index:04d} "
    return (head + "x" * DESCRIPTION_LENGTH)[: DESCRIPTION_LENGTH - 1] + "E"


def skills_for(kit: ConformanceKit, count: int) -> list[str]:
    """Write ``count`` skills with long descriptions; return the spec entries."""
    entries = []
    for index in range(count):
        name = f"listed-{index:04d}"
        folder = kit.project / "skills" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description_for(index)}\n---\nBody.\n",
            encoding="utf-8",
        )
        entries.append(f"./skills/{name}/SKILL.md")
    return entries


def whole_descriptions(text: str) -> int:
    """How many distinct descriptions ``text`` holds in full (marker included)."""
    return len(set(re.findall(r"Handles case (\d{4}) x+E", text)))


def check_listing_budget(kit: ConformanceKit, count: int, *, over: bool) -> None:
    """Run ``count`` skills; ``over`` says whether that passes the backend's figure for the
    kit's model (``skill_listing_budget_for``)."""
    backend = kit.suite.backend()
    budget = backend.skill_listing_budget_for(kit.suite.model_for_tests)
    entries = skills_for(kit, count)
    pairs = [(f"listed-{i:04d}", description_for(i)) for i in range(count)]
    assert (backend.skill_listing_chars(pairs) > budget) is over
    server = kit.server(kit.script([{"text": "Nothing to load."}]))
    spec = kit.spec(
        [{"name": "listing", "prompt": "Hello.", "assert": "assert True"}], skills=entries
    )
    run = kit.run(spec, server)
    ok_run(run)
    listed = [r for r in server.model_requests() if "listed-0000" in r.sent_text()]
    assert listed, "the skills never reached the model"
    shown = whole_descriptions(listed[0].sent_text())
    warned = "Warning: " in run.stderr and f"{budget:,}" in run.stderr
    if over:
        assert shown < count, f"all {count} descriptions arrived whole: the figure is too low"
        assert warned, run.describe()
    else:
        assert shown == count, f"only {shown} of {count} descriptions arrived whole"
        assert not warned, run.describe()
