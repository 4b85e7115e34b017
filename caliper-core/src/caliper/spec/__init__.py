"""Eval specs (``*.eval.yaml``).

``model`` holds the validated form; ``load`` reads and checks a spec (``load_spec``,
``check_spec``); ``skills`` resolves ``skills:`` sources to folders (``resolve_skills``), with
``gitcache`` for git sources and ``frontmatter`` for ``SKILL.md`` rules. ``yamldoc``,
``sections``, ``mcpspec``, ``tasks`` and ``fields`` are the pieces of the checker.
"""
