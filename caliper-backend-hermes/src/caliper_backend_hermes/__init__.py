"""Caliper backend plugin for the hermes agent CLI."""
