"""``mendikot league``: every pair of several agents on the same duplicate deals, with ratings."""

from __future__ import annotations

import argparse
import sys

from agents import load

from ..arena import league, write_json
from ..seeding import derived_seed
from .common import (
    add_rules_arguments,
    add_threads_argument,
    check_output_paths,
    positive_int,
    rules_from_args,
    seed_value,
    torch_threads,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "league", help="play every pair of agents on duplicate deals; win-rate table and Bradley-Terry ratings"
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        required=True,
        help="agent names or checkpoint paths, two or more (checkpoints joined by + are one ensemble; "
        "a network ending in :views=24 averages its suit views)",
    )
    parser.add_argument("--deals", type=positive_int, default=1000, help="duplicate deal pairs per pairing")
    parser.add_argument(
        "--seed", type=seed_value, default=0, help="seed of the deals (the same deals for every pairing)"
    )
    parser.add_argument("--chunk", type=positive_int, default=1024, help="deal pairs per batch")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_threads_argument(parser)
    add_rules_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_output_paths(json_file=args.json)
    rules = rules_from_args(args)
    agents = [load(spec, rules, seed=derived_seed(args.seed * 100 + i)) for i, spec in enumerate(args.agents)]
    with torch_threads(args.threads):
        result = league(
            rules,
            agents,
            args.deals,
            seed=args.seed,
            chunk=args.chunk,
            progress=not args.no_progress and sys.stderr.isatty(),
            names=args.agents,
        )
    print(f"rules: {rules.to_dict()}")
    print(result.summary())
    if args.json:
        write_json(args.json, result.to_dict())
        print(f"results written to {args.json}")
    return 0
