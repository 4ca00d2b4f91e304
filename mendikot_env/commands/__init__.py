"""Subcommands of the ``mendikot`` console command, one module each."""
