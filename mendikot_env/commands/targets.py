"""``mendikot targets``: hands of search self-play, every decision labelled with the search's
move values, written as shards that ``mendikot train --algorithm exit --exit-targets`` fits.

Labels cost most of expert iteration's compute and outlive any one network: a folder per
process (each with its own ``--seed``) can be made on as many cores or machines as there
are, stopped and started again, then fitted together.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import add_rules_arguments, add_threads_argument, positive_int, rules_from_args, seed_value, torch_threads


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "targets",
        help="label hands of search self-play with the search's move values, as shards a fit reads",
        description="Play hands with the search at every seat (or --mover) and write, for every decision, the "
        "observation, the mask, the search's mean value of every legal move with its standard error, the move "
        "it chooses and the hand's outcome. Run the same command again to add the shards still missing; "
        "fit them with `mendikot train --algorithm exit --exit-targets OUT`.",
    )
    parser.add_argument("--out", required=True, help="the target folder (made if missing; a rerun adds to it)")
    parser.add_argument(
        "--search", default="search:k=32", help="the search that labels every decision: a search spec (docs/agents.md)"
    )
    parser.add_argument(
        "--hands", type=positive_int, default=1024, help="hands the folder holds when done (whole shards: rounded up)"
    )
    parser.add_argument(
        "--shard-hands", type=positive_int, default=64, help="hands played and searched at once, one shard each"
    )
    parser.add_argument(
        "--seed", type=seed_value, default=0, help="seed of the deals and the search: give every folder its own"
    )
    parser.add_argument(
        "--mover",
        default=None,
        help="the agent that plays the labelled hands (a name, a run folder or an agent file; default: the move "
        "the search chooses), as DAgger gathers the decisions a network meets",
    )
    add_threads_argument(parser)
    add_rules_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    import agents
    from agents.search import SearchAgent

    from ..seeding import SEED_MAX
    from ..training.search_targets import generate_targets

    rules = rules_from_args(args)
    search_seed, shard_seed = np.random.SeedSequence([args.seed]).generate_state(2, dtype=np.uint64) % SEED_MAX
    search = agents.make(args.search, rules, seed=int(search_seed))
    if not isinstance(search, SearchAgent):
        raise ValueError(f"--search {args.search!r} is not a search spec: give one such as search:k=32")
    mover = agents.load(args.mover, rules) if args.mover else None
    run_id = f"targets seed {args.seed} {args.search} mover {args.mover or 'search'} shard hands {args.shard_hands}"
    with torch_threads(args.threads):
        stats = generate_targets(
            Path(args.out),
            rules,
            search,
            run_id=run_id,
            shards=-(-args.hands // args.shard_hands),
            hands_per_shard=args.shard_hands,
            seed=int(shard_seed),
            mover=mover,
        )
    print(f"target folder: {args.out}")
    print(
        f"  {stats.shards} shards written ({stats.decisions:,} decisions, {stats.labelled:,} labelled, "
        f"{stats.labelled_per_cpu_s:.1f} labelled per CPU second), {stats.kept_decisions:,} decisions kept"
    )
    return 0
