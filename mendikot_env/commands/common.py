"""Arguments shared by several subcommands (rules selection)."""

from __future__ import annotations

import argparse
from typing import Any

from ..rules import PRESETS, RULE_CHOICES, Rules


def add_rules_arguments(parser: argparse.ArgumentParser) -> None:
    """``--rules PRESET`` plus one option per rules field to override it."""
    parser.add_argument("--rules", default="standard", help=f"rules preset: {', '.join(PRESETS)}")
    for field, choices in RULE_CHOICES.items():
        kind = int if field == "n_players" else str
        parser.add_argument(
            f"--{field.replace('_', '-')}",
            dest=field,
            type=kind,
            default=None,
            help=f"override {field}: {', '.join(map(str, choices))}",
        )
    parser.add_argument("--target", type=int, default=None, help="match target (points, or deals for fixed_deals)")


def rules_from_args(args: argparse.Namespace) -> Rules:
    """The Rules chosen on the command line (preset, then field overrides)."""
    overrides: dict[str, Any] = {
        f: getattr(args, f) for f in (*RULE_CHOICES, "target") if getattr(args, f, None) is not None
    }
    return Rules.preset(args.rules, **overrides)
