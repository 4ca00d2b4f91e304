"""Arguments shared by several subcommands (rules selection, options from a dataclass)."""

from __future__ import annotations

import argparse
import ast
import contextlib
import inspect
import itertools
import math
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..rules import PRESETS, RULE_CHOICES, Rules
from ..run_folder import check_output_name
from ..seeding import SEED_MAX, SEED_RULE


def _bounded(kind: type, low: float, what: str, high: float = math.inf) -> Callable[[str], Any]:
    """An argparse ``type`` that parses ``kind`` and refuses values outside [``low``,
    ``high``] and infinities, so a bad count, seed or time is a one-line usage error, not a
    numpy traceback, an empty loop or one that never ends. Integers stop at 2**63 - 1, the
    most an int64 array (a count of deals, a batch size) holds."""
    if kind is int:
        high = min(high, SEED_MAX)
    limit = "" if kind is not int or str(SEED_MAX) in what else f" up to {SEED_MAX} (2**63 - 1)"

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:  # also an integer of over 4300 digits
            value = None
        if value is not None and low <= value <= high and (kind is int or math.isfinite(value)):  # NaN fails
            return value
        over = limit if value is None or (kind is int and value > high) else ""
        shown = f"{text!r:.60}" if value is None else f"{text:.60}"
        raise argparse.ArgumentTypeError(f"must be {what}{over}, got {shown}")

    parse.__name__ = what
    return parse


positive_int = _bounded(int, 1, "a positive integer")
count = _bounded(int, 0, "an integer 0 or more")
seed_value = _bounded(int, 0, f"a seed: {SEED_RULE}", high=SEED_MAX)
positive_float = _bounded(float, 1e-9, "a positive finite number")


def add_threads_argument(parser: argparse.ArgumentParser) -> None:
    """``--threads``: torch's CPU threads for the trained agents' networks."""
    parser.add_argument(
        "--threads",
        type=positive_int,
        default=1,
        help="torch CPU threads for trained agents (default 1: with another job on a core, one thread played "
        "2.4 to 3.4 times faster than two on a 2-core machine; idle, two were 12%% faster)",
    )


@contextlib.contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Give torch ``threads`` CPU threads inside the block, if a trained agent loaded it (the
    bots need none), and restore its count after (``main()`` may run inside a notebook).

    One thread is the commands' default because torch's threads spin waiting for each other
    when another job holds a core. Playing 300 deal pairs of ``trained`` against ``hard`` on
    the 2-core VM with a busy loop on one core took 0.63 to 0.66 s with one thread and 1.56
    to 2.25 s with two; on the idle machine two threads were about 12% faster (0.65 to 0.71 s
    against 0.74 to 0.80 s).
    """
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def check_output_paths(json_file: str | None = None, save_dir: str | None = None, plot_file: str | None = None) -> None:
    """Refuse output paths that cannot be written before any game is played, not after (an
    empty name too: ``--save ""`` would otherwise save nothing without a word). A missing
    folder is made when the output is written, so its nearest existing folder must be writable."""
    for flag, name, what in (
        ("--json", json_file, "file"),
        ("--plot", plot_file, "file"),
        ("--save", save_dir, "folder"),
    ):
        if name is not None:
            check_output_name(flag, name, what)
            if problem := _output_problem(Path(name).absolute(), what):
                raise ValueError(f"{flag} {name}: {problem}")


def _output_problem(path: Path, what: str) -> str:
    """Why an output ``what`` ("file" or "folder") at ``path`` cannot be written, or ``""``."""
    folder = path if what == "folder" else path.parent
    while not folder.exists():
        folder = folder.parent
    if what == "file" and path.is_dir():
        return "that is a folder; give a file name"
    if what == "folder" and path.exists() and not path.is_dir():
        return "a file of that name exists; give a folder"
    if not folder.is_dir():
        return f"{folder} is a file, so the folder cannot be made"
    if not os.access(folder, os.W_OK | os.X_OK) or (what == "file" and path.exists() and not os.access(path, os.W_OK)):
        return f"{path if path.exists() else folder} is not writable"
    return ""


def add_rules_arguments(parser: argparse.ArgumentParser) -> None:
    """``--rules PRESET`` plus one option per rules field to override it."""
    parser.add_argument("--rules", default="standard", help=f"rules preset: {', '.join(PRESETS)}")
    add_rule_field_arguments(parser)


def add_rule_field_arguments(parser: argparse.ArgumentParser) -> None:
    """One option per rules field (``--n-players 6``), each overriding the preset's value."""
    for field, choices in RULE_CHOICES.items():
        kind = int if field == "n_players" else str
        parser.add_argument(
            f"--{field.replace('_', '-')}",
            dest=field,
            type=kind,
            default=None,
            help=f"override {field}: {', '.join(map(str, choices))}",
        )
    parser.add_argument(
        "--target", type=positive_int, default=None, help="match target (points, or deals for fixed_deals)"
    )


def rules_from_args(args: argparse.Namespace) -> Rules:
    """The Rules chosen on the command line (preset, then field overrides)."""
    return Rules.preset(args.rules, **rule_overrides(args))


def rule_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The rules fields given on the command line (the options of :func:`add_rule_field_arguments`)."""
    return {f: getattr(args, f) for f in (*RULE_CHOICES, "target") if getattr(args, f, None) is not None}


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
