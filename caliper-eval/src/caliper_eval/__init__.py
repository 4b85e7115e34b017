"""The user-facing Caliper distribution: the ``caliper`` command plus the default plugins."""
