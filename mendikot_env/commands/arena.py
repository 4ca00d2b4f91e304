"""``mendikot arena``: duplicate-deal comparison of two agents on the batched core."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from agents import load

from ..arena import ActionLog, duplicate_arena, write_json
from ..core import State
from ..records import make_record, save_record
from ..seeding import derived_seed
from .common import (
    add_rules_arguments,
    add_threads_argument,
    check_output_paths,
    count,
    positive_int,
    rules_from_args,
    seed_value,
    torch_threads,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "arena",
        help="compare two agents on duplicate deals (each deal played twice, seats swapped)",
        description="Every deal is played twice with the same cards and dealer: agent A on the even seats, "
        "then on the odd seats. The win rate of A has a 95% confidence interval computed on per-deal-pair scores.",
    )
    parser.add_argument(
        "--a",
        required=True,
        help="agent A: random, easy, medium, hard, trained, apprentice, search or a search spec "
        "(search:k=48,rollout=hard,exact=2; docs/agents.md), a run folder or checkpoint path, "
        "or run folders joined by + (an ensemble of networks); a network ending in :views=24 "
        "plays its policy averaged over the suits' 24 relabellings",
    )
    parser.add_argument("--b", required=True, help="agent B")
    parser.add_argument(
        "--deals", type=positive_int, default=1000, help="duplicate deal pairs (hands played = 2 x deals)"
    )
    parser.add_argument("--seed", type=seed_value, default=0, help="seed of the deals (agents are seeded from it too)")
    parser.add_argument(
        "--matches", type=count, default=0, help="also play this many duplicate match pairs to the target"
    )
    parser.add_argument("--chunk", type=positive_int, default=1024, help="deal pairs per batch")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--save", metavar="DIR", help="save every hand as a JSON game record in DIR")
    parser.add_argument(
        "--overwrite", action="store_true", help="delete the records an earlier --save left in DIR first"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_threads_argument(parser)
    add_rules_arguments(parser)
    parser.set_defaults(func=run)


# The names record_saver gives its files: one per hand, by deal pair and A's team.
RECORD_NAMES = "pair*_a*.json"


def prepare_records_folder(save_dir: str | Path, overwrite: bool) -> None:
    """Refuse a ``--save`` folder that holds an earlier run's records (their names are by deal
    pair, so a new run would overwrite some and leave the rest: two runs mixed), or delete
    them first when ``overwrite`` is True.

    Raises:
        ValueError: the folder holds records and ``overwrite`` is False.
    """
    folder = Path(save_dir)
    old = sorted(folder.glob(RECORD_NAMES)) if folder.is_dir() else []
    if old and not overwrite:
        raise ValueError(
            f"--save {save_dir} already holds {len(old)} arena record(s) ({old[0].name}, ...); a new run would"
            " mix with them: give --overwrite to delete them first, or another folder"
        )
    for path in old:
        path.unlink()


def record_saver(directory: str | Path, name_a: str, name_b: str, seed: int):
    """An ``on_hand`` callback for :func:`duplicate_arena` that writes one record per hand."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)

    def save(state: State, log: ActionLog, pair: np.ndarray, a_team: np.ndarray) -> None:
        n = state.rules.n_players
        for g in range(state.batch_size):
            team_a = int(a_team[g])
            players = [name_a if s % 2 == team_a else name_b for s in range(n)]
            meta = {"seed": seed, "deal_pair": int(pair[g]), "a": name_a, "b": name_b, "a_team": team_a}
            record = make_record(state, g, log.entries(g), players=players, meta=meta)
            save_record(record, directory / f"pair{int(pair[g]):06d}_a{team_a}.json")

    return save


def run(args: argparse.Namespace) -> int:
    check_output_paths(json_file=args.json, save_dir=args.save)
    rules = rules_from_args(args)
    agent_a = load(args.a, rules, seed=derived_seed(args.seed * 2 + 1))
    agent_b = load(args.b, rules, seed=derived_seed(args.seed * 2 + 2))
    if args.save:  # after every other check: --overwrite deletes nothing for a mistyped agent
        prepare_records_folder(args.save, args.overwrite)
    on_hand = record_saver(args.save, args.a, args.b, args.seed) if args.save else None
    with torch_threads(args.threads):
        result = duplicate_arena(
            rules,
            agent_a,
            agent_b,
            args.deals,
            seed=args.seed,
            chunk=args.chunk,
            progress=not args.no_progress and sys.stderr.isatty(),
            on_hand=on_hand,
            matches=args.matches,
        )
    result.a, result.b = args.a, args.b
    print(f"rules: {rules.to_dict()}")
    print(result.summary())
    if args.save:
        print(f"saved {result.hands} records in {args.save}")
    if args.json:
        write_json(args.json, result.to_dict())
        print(f"results written to {args.json}")
    return 0
