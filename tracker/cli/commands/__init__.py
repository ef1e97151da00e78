"""The commands, one module per group, each listed by name in the main group's command table
(`tracker.cli.main`) and imported only when a command of its own is run.

May import: the rest of the cli room, and what the cli room may import.
"""
