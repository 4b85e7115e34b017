"""Caliper backend for the opencode CLI (npm ``opencode-ai``): an example plugin.

It lives outside the caliper workspace on purpose: it is built, installed and tested the way
a third-party plugin is (see docs/plugins/writing-a-plugin.md, which walks through it).
"""
