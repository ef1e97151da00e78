"""The command line: the main group (commands loaded on demand), the options and output every
command shares, completion, the interactive shell and the `--server` client; `commands/` holds
one module per group of commands.

May import: reports, interchange, service, analysis, storage, projections, domain.
"""
