"""`python -m tracker`: the same command line as the `tracker` script."""

from tracker.cli.main import main

main()
