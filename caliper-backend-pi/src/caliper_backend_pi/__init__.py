"""Caliper backend plugin for the pi agent CLI."""
