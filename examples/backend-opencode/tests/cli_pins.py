"""The opencode CLI these tests run (standard library only: scripts/provision-agent-clis
reads it by path with ``--pins tests/cli_pins.py``)."""

CLI_PINS = {
    "opencode": {
        "kind": "npm",
        "package": "opencode-ai",
        "version": "1.18.33",
        "bin": "opencode",
        # a native binary: npm only installs it
        "node_requirement": "any with npm (the package declares no engines)",
    },
}
