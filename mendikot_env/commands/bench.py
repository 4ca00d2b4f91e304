"""``mendikot bench``: speed of the core, the core with observations, and the AEC env.

Random legal play of full hands, masks and the random choice included. Speed is
measured here, never in timed tests.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from .. import core
from ..env import env as wrapped_env
from ..env import raw_env
from ..observation import ObservationEncoder
from ..rules import Rules
from .common import add_rules_arguments, rules_from_args


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("bench", help="measure hands/s of the core and steps/s of the AEC env")
    add_rules_arguments(parser)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 64, 1024, 8192], help="core batch sizes")
    parser.add_argument("--seconds", type=float, default=2.0, help="time spent on each measurement")
    parser.set_defaults(func=run)


def _timed(play_once: Callable[[], tuple[int, int]], seconds: float) -> tuple[float, float]:
    """Repeat ``play_once`` (returns hands, plays) for ``seconds``; return rates per second."""
    play_once()  # warm-up
    hands = plays = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        h, p = play_once()
        hands += h
        plays += p
    return hands / elapsed, plays / elapsed


def core_rate(rules: Rules, batch: int, seconds: float, observe: bool, seed: int = 0) -> tuple[float, float]:
    """Hands/s and card plays/s of random legal play on the core at batch size ``batch``."""
    rng = np.random.default_rng(seed)
    encoder = ObservationEncoder(rules)
    buffer = np.empty((batch, encoder.size), dtype=np.float32)

    def play_once() -> tuple[int, int]:
        state = core.new_hands(rules, batch, rng)
        plays = 0
        while not state.done.all():
            bits = core.legal_bits(state)
            if observe:
                encoder.encode(state, state.current, out=buffer, legal=bits)
            actions = core.random_legal_actions(bits, rng)
            core.step(state, actions, check=False)
            plays += batch
        return batch, plays

    return _timed(play_once, seconds)


def aec_rate(rules: Rules, seconds: float, wrapped: bool, seed: int = 0) -> float:
    """Agent steps/s of the AEC env (``last()`` then a random legal ``step()``)."""
    env = wrapped_env(rules) if wrapped else raw_env(rules)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)

    def play_once() -> tuple[int, int]:
        env.reset()
        steps = 0
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
            else:
                legal = np.flatnonzero(obs["action_mask"])
                env.step(int(legal[int(rng.random() * legal.size)]))
            steps += 1
        return 1, steps

    return _timed(play_once, seconds)[1]


def run(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    print(f"rules: {rules}")
    print(f"{'measure':<34}{'B':>6}{'hands/s':>12}{'plays/s':>14}")
    for observe in (False, True):
        label = "core + acting seat's observation" if observe else "core (masks + random legal play)"
        for batch in args.batch_sizes:
            hands, plays = core_rate(rules, batch, args.seconds, observe)
            print(f"{label:<34}{batch:>6}{hands:>12,.0f}{plays:>14,.0f}")
    for wrapped in (False, True):
        label = "AEC env.step, wrapped env()" if wrapped else "AEC env.step, raw_env()"
        steps = aec_rate(rules, args.seconds, wrapped)
        print(f"{label:<34}{1:>6}{'':>12}{steps:>14,.0f} steps/s")
    return 0
