"""``mendikot demo``: play one hand between random agents in the AEC env and print it."""

from __future__ import annotations

import argparse

from agents import RandomAgent

from ..cards import action_str
from ..env import raw_env
from .common import add_rules_arguments, rules_from_args, seed_value


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("demo", help="play and print one hand between random agents")
    add_rules_arguments(parser)
    parser.add_argument("--seed", type=seed_value, default=0, help="seed of the deal and the agents")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    env = raw_env(rules, render_mode="ansi")
    env.reset(seed=args.seed)
    agent = RandomAgent(seed=args.seed)
    print(env.render())
    print()
    line: list[str] = []
    for name in env.agent_iter():
        obs, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = int(agent.act(obs["observation"][None], obs["action_mask"][None])[0])
        line.append(f"{name}: {action_str(action, symbols=True)}")
        tricks_before = int(env.game.trick_no[0])
        env.step(action)
        if int(env.game.trick_no[0]) != tricks_before:
            winner = env.result["trick_winners"][-1] if env.result else int(env.game.trick_winners[0, tricks_before])
            print(f"trick {tricks_before + 1:>2}: " + "  ".join(line) + f"  -> won by player_{winner}")
            line = []
    print()
    print(env.render())
    return 0
