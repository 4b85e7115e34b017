"""Old import paths of modules that moved, kept working for one release.

``import caliper.process`` still works and gives the very module now at
``caliper.system.process`` (so patching either name patches both), with a
``DeprecationWarning`` that names the new path. :data:`RELOCATED` is the table;
:func:`install` puts the finder on ``sys.meta_path`` (``caliper/__init__.py`` calls it).
The old paths go in 2.0.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from types import ModuleType

RELOCATED: dict[str, str] = {
    # old module path: new module path
    "caliper.agent_ending": "caliper.plugin.agent_ending",
    "caliper.attempt": "caliper.plugin.attempt",
    "caliper.backend": "caliper.plugin.backend",
    "caliper.cli_versions": "caliper.plugin.cli_versions",
    "caliper.executor": "caliper.plugin.executor",
    "caliper.history": "caliper.plugin.conversation",
    "caliper.hookspecs": "caliper.plugin.hookspecs",
    "caliper.judge": "caliper.plugin.judge",
    "caliper.markers": "caliper.plugin.markers",
    "caliper.mcp": "caliper.plugin.mcp",
    "caliper.mcp_unusable": "caliper.plugin.mcp_unusable",
    "caliper.private_files": "caliper.plugin.private_files",
    "caliper.sandbox": "caliper.plugin.sandbox",
    "caliper.skill_listing": "caliper.plugin.skill_listing",
    "caliper.skill_reads": "caliper.plugin.skill_reads",
    "caliper.skills": "caliper.plugin.skills",
    "caliper.verdict": "caliper.plugin.verdict",
    "caliper.direct_judges": "caliper.host.direct_judges",
    "caliper.engine": "caliper.host.engine",
    "caliper.entry_points": "caliper.host.entry_points",
    "caliper.install_hints": "caliper.host.install_hints",
    "caliper.plugins": "caliper.host.plugins",
    "caliper.help_order": "caliper.commands.help_order",
    "caliper.ledger": "caliper.system.ledger",
    "caliper.os_errors": "caliper.system.os_errors",
    "caliper.output_file": "caliper.system.output_file",
    "caliper.process": "caliper.system.process",
    "caliper.quick_exit": "caliper.system.quick_exit",
    "caliper.skill_ignore": "caliper.system.skill_ignore",
    "caliper.skill_tree": "caliper.system.skill_tree",
    "caliper.stop_policy": "caliper.system.stop_policy",
    "caliper.textsafe": "caliper.system.textsafe",
    "caliper.runner.compose": "caliper.runner.run.compose",
    "caliper.runner.plan": "caliper.runner.run.plan",
    "caliper.runner.schedule": "caliper.runner.run.schedule",
    "caliper.runner.job_runner": "caliper.runner.run.job_runner",
    "caliper.runner.journaling": "caliper.runner.run.journaling",
    "caliper.runner.assemble": "caliper.runner.run.assemble",
    "caliper.runner.ending": "caliper.runner.run.ending",
    "caliper.runner.options": "caliper.runner.run.options",
    "caliper.runner.meta": "caliper.runner.run.meta",
    "caliper.runner.control": "caliper.runner.run.control",
    "caliper.runner.executors": "caliper.runner.run.executors",
    "caliper.runner.prepare": "caliper.runner.run.prepare",
    "caliper.runner.portable": "caliper.runner.run.portable",
    "caliper.runner.attempt_pipeline": "caliper.runner.attempt.pipeline",
    "caliper.runner.preparer": "caliper.runner.attempt.preparation",
    "caliper.runner.judging": "caliper.runner.attempt.judging",
    "caliper.runner.judge_calls": "caliper.runner.attempt.judge_calls",
    "caliper.runner.forbidden": "caliper.runner.attempt.forbidden",
    "caliper.runner.retry": "caliper.runner.attempt.retry",
    "caliper.runner.workdirs": "caliper.runner.attempt.workdirs",
    "caliper.runner.probe": "caliper.replay.probe",
    "caliper.runner.regrade": "caliper.replay.regrade",
    "caliper.spec.history": "caliper.spec.conversation",
}


class _AliasLoader:
    """Loads an old path as the module at its new path (the same object)."""

    def __init__(self, new_name: str) -> None:
        self.new_name = new_name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """The module at the new path, imported if need be."""
        warnings.warn(
            f"{spec.name} moved to {self.new_name}; the old path goes in caliper 2.0",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(self.new_name)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module ran at its new path."""


class RelocatedFinder:
    """Finds the old paths in :data:`RELOCATED` (and nothing else)."""

    def find_spec(self, fullname: str, path: object = None, target: object = None):
        """A spec for an old path whose loader hands back the moved module."""
        new_name = RELOCATED.get(fullname)
        if new_name is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new_name))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(finder, RelocatedFinder) for finder in sys.meta_path):
        sys.meta_path.append(RelocatedFinder())
