"""Arguments shared by several subcommands (rules selection, options from a dataclass)."""

from __future__ import annotations

import argparse
import ast
import inspect
import itertools
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


def field_docs(cls: type) -> dict[str, str]:
    """Each field's docstring in a dataclass of settings (``training.args.Args``, the RLlib
    Args), on one line: the dataclass is the one place the options are explained, so the
    ``--help`` of the commands reads them from its source."""
    try:
        body = ast.parse(inspect.getsource(cls)).body[0].body  # type: ignore[attr-defined]
    except (OSError, TypeError):  # installed without its sources: the help shows defaults only
        return {}
    docs = {}
    for field_node, doc in itertools.pairwise(body):
        if isinstance(field_node, ast.AnnAssign) and isinstance(field_node.target, ast.Name):
            if isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str):
                docs[field_node.target.id] = " ".join(doc.value.value.split())
    return docs
