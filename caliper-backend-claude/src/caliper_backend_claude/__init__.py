"""Caliper backend plugin for the claude agent CLI."""
