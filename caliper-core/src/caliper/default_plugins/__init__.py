"""Plugins that ship with the core and register like any other: the ``assert`` and
``activates`` judges (entry points in ``caliper.judges``)."""
