"""``mendikot train``: self-play training (masked PPO, DMC or expert iteration) with checkpoints and resume."""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import add_rule_field_arguments, field_docs, rule_overrides

if TYPE_CHECKING:
    from ..training.args import Args


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "train",
        help="self-play training (needs the 'train' extra: torch)",
        description="Train a self-play agent on the batched core. Every Args field is an option.",
    )
    start = parser.add_mutually_exclusive_group()
    start.add_argument("--resume", metavar="RUN", default=None, help="continue the run in folder RUN exactly")
    start.add_argument("--overwrite", action="store_true", help="delete the run already in --out and start over")
    from ..training.args import Args

    docs = field_docs(Args)
    for f in fields(Args):
        if f.name == "rule_fields":
            continue  # one option per rules field instead, below
        flag = "--" + f.name.replace("_", "-")
        default = f.default
        shown = (" ".join(map(str, default)) or "none") if isinstance(default, tuple) else default
        text = f"{docs.get(f.name, '')} (default: {shown})".replace("%", "%%")
        if isinstance(default, bool):
            parser.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction, default=None, help=text)
        elif isinstance(default, tuple):
            kind = int if f.name == "hidden" else str
            parser.add_argument(flag, dest=f.name, nargs="+", type=kind, default=None, help=text)
        else:
            parser.add_argument(flag, dest=f.name, type=type(default), default=None, help=text)
    add_rule_field_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        from ..training import exit as expert_iteration
        from ..training.loop import train
        from ..training.metrics import read_rows
    except ImportError as error:
        raise ValueError(f"training needs torch: pip install -e '.[train]' ({error})") from None
    from ..training.args import Args

    given = {f.name: getattr(args, f.name) for f in fields(Args) if getattr(args, f.name, None) is not None}
    overrides = rule_overrides(args)
    if overrides:
        given["rule_fields"] = overrides
    if args.resume and "out" in given and Path(given["out"]).resolve() != Path(args.resume).resolve():
        raise ValueError(
            f"--out {given['out']} with --resume {args.resume}: a resume continues the run in its own folder; "
            "leave out --out (or, to branch the run, copy its folder and resume the copy)"
        )
    checkpoint = None
    if args.resume:  # read once: the run's settings here, its state in train
        from agents.checkpoint_format import load_checkpoint

        checkpoint = load_checkpoint(Path(args.resume) / "checkpoint.pt", kind="training")
        options = _resumed_options(Path(args.resume), given, checkpoint)
    else:
        options = Args.from_dict(given)
    trainer = expert_iteration.train if options.algorithm == "exit" else train
    out = trainer(options, resume=bool(args.resume), overwrite=args.overwrite, checkpoint=checkpoint)
    final = read_rows(out / "metrics.jsonl")[-1]
    print(f"run folder: {out}")
    for key, value in final.items():
        if key.startswith("eval/win_rate_vs_"):
            name = key.removeprefix("eval/win_rate_vs_")
            low, high = final[f"eval/ci_low_vs_{name}"], final[f"eval/ci_high_vs_{name}"]
            print(f"  vs {name:<8} win rate {value:.3f} (95% CI {low:.3f} .. {high:.3f})")
    return 0


def _resumed_options(run: Path, given: dict[str, Any], checkpoint: dict[str, Any]) -> Args:
    """The run's own settings (in its loaded training ``checkpoint``), except what the command
    line changes (e.g. more --minutes).

    Settings the checkpoint holds that this package cannot use (and the command line does
    not replace) are a CheckpointError (a ValueError: one line) naming the file; a bad value
    on the command line stays the user's error, naming its option. Whole numbers saved as
    floats (``25.0``, by a run started before the settings were type-checked) are read as
    the integers they are.
    """
    from ..training.args import Args
    from ..training.checkpoint import CheckpointError

    path = run / "checkpoint.pt"
    saved = {key: _whole_numbers(Args, key, value) for key, value in checkpoint["args"].items()}
    saved.setdefault("hidden_trump_feature", False)  # runs saved before the feature existed
    if not isinstance(saved.get("rule_fields", {}), dict):
        raise CheckpointError(f"{path} holds rule_fields {saved['rule_fields']!r:.80}, not a dict of Rules fields")
    merged = given
    if "rule_fields" in given:  # a changed field is checked against the run's own rules
        merged = {**given, "rule_fields": {**saved.get("rule_fields", {}), **given["rule_fields"]}}
    try:
        return Args.from_dict({**saved, **merged, "out": str(run)})
    except (TypeError, ValueError):
        # Whose fault: the run's own settings that the command line leaves (its rule fields
        # are merged, so the run's are kept), or else the command line's, named by its option.
        kept = {key: value for key, value in saved.items() if key not in given or key == "rule_fields"}
        try:
            Args.from_dict({**kept, "out": str(run)})
        except (TypeError, ValueError) as own:
            raise CheckpointError(f"{path} holds settings this package cannot use: {own}") from None
        raise


def _whole_numbers(settings: type, key: str, value: Any) -> Any:
    """``value`` with whole floats as ints where the field ``key`` holds integers (a count,
    or a list of layer sizes)."""
    default = next((f.default for f in fields(settings) if f.name == key), None)

    def whole(item: Any) -> Any:
        return int(item) if isinstance(item, float) and item.is_integer() else item

    if isinstance(default, tuple) and default and isinstance(default[0], int) and isinstance(value, list):
        return [whole(item) for item in value]
    if isinstance(default, int) and not isinstance(default, bool):
        return whole(value)
    return value
