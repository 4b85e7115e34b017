"""The user-facing Caliper meta distribution: caliper-core (which owns the ``caliper`` command)
plus the Claude Code backend and the LLM judge; extras add the other backends."""
