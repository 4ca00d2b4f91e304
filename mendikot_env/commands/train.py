"""``mendikot train``: self-play training (masked PPO) with checkpoints and resume."""

from __future__ import annotations

import argparse
import json
from dataclasses import fields
from pathlib import Path

from .common import field_docs


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "train",
        help="self-play training (needs the 'train' extra: torch)",
        description="Train a self-play agent on the batched core. Every Args field is an option.",
    )
    parser.add_argument("--resume", metavar="RUN", default=None, help="continue the run in folder RUN exactly")
    from ..training.args import Args

    docs = field_docs(Args)
    for f in fields(Args):
        flag = "--" + f.name.replace("_", "-")
        default = f.default
        shown = " ".join(map(str, default)) if isinstance(default, tuple) else default
        text = f"{docs.get(f.name, '')} (default: {shown})".replace("%", "%%")
        if isinstance(default, bool):
            parser.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction, default=None, help=text)
        elif isinstance(default, tuple):
            kind = int if f.name == "hidden" else str
            parser.add_argument(flag, dest=f.name, nargs="+", type=kind, default=None, help=text)
        else:
            parser.add_argument(flag, dest=f.name, type=type(default), default=None, help=text)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        from ..training.checkpoint import load_checkpoint
        from ..training.loop import train
    except ImportError as error:
        raise ValueError(f"training needs torch: pip install -e '.[train]' ({error})") from None
    from ..training.args import Args

    given = {f.name: getattr(args, f.name) for f in fields(Args) if getattr(args, f.name, None) is not None}
    if args.resume:
        saved = load_checkpoint(Path(args.resume) / "checkpoint.pt", kind="training")["args"]
        saved.setdefault("hidden_trump_feature", False)  # runs saved before the feature existed
        # The run's own settings, except what the command line changes (e.g. more --minutes).
        options = Args.from_dict({**saved, **given, "out": args.resume})
    else:
        options = Args.from_dict(given)
    out = train(options, resume=bool(args.resume))
    final = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines() if line.strip()][-1]
    print(f"run folder: {out}")
    for key, value in final.items():
        if key.startswith("eval/win_rate_vs_"):
            name = key.removeprefix("eval/win_rate_vs_")
            low, high = final[f"eval/ci_low_vs_{name}"], final[f"eval/ci_high_vs_{name}"]
            print(f"  vs {name:<8} win rate {value:.3f} (95% CI {low:.3f} .. {high:.3f})")
    return 0
