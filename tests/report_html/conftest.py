"""Fixtures for the HTML report tests: the headless browser (see ``browser_support``)."""

from browser_support import browser  # noqa: F401  (a fixture, used by name)
