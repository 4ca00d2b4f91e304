"""The ``mendikot`` command: one subcommand per job (demo, bench, ...).

Each subcommand lives in its own module with ``add_parser(subparsers)`` that registers
its arguments and sets ``func``; this file only wires them together.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Modules that provide a subcommand, in the order shown by --help.
COMMAND_MODULES = (
    "mendikot_env.commands.demo",
    "mendikot_env.commands.bench",
    "mendikot_env.commands.arena",
    "mendikot_env.commands.league",
    "mendikot_env.commands.replay",
    "mendikot_env.commands.play",
    "mendikot_env.commands.serve",
    "mendikot_env.commands.targets",
    "mendikot_env.commands.train",
    "mendikot_env.commands.train_rllib",
    "mendikot_env.commands.exploit",
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand."""
    parser = argparse.ArgumentParser(prog="mendikot", description="Mendikot RL environment tools")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:  # an optional extra is missing: the command says so when run
            _add_unavailable(subparsers, module_name.rsplit(".", 1)[-1].replace("_", "-"), error)
            continue
        module.add_parser(subparsers)
    return parser


def _add_unavailable(subparsers: argparse._SubParsersAction, name: str, error: ImportError) -> None:
    """A placeholder subcommand that explains which dependency is missing."""

    def explain(args: argparse.Namespace) -> int:
        raise ValueError(
            f"'{name}' is unavailable: {error}. Install the matching extra, e.g. pip install -e '.[train]'"
        )

    parser = subparsers.add_parser(name, help=f"(unavailable: {error.name or error})", add_help=False)
    parser.set_defaults(func=explain)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, OSError) as error:  # bad input or a file that cannot be read or written
        print(f"mendikot {args.command}: error: {error}", file=sys.stderr)
        return 2
    except MemoryError as error:  # numpy's names the array it could not allocate
        advice = "ask for fewer deals, smaller batches or fewer --games"
        print(f"mendikot {args.command}: error: not enough memory ({error}); {advice}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
