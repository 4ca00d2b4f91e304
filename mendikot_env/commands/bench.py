"""``mendikot bench``: speed of the core, the core with observations, and the AEC env.

Random legal play of full hands, masks and the random choice included. Speed is
measured here, never in timed tests.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from pettingzoo import AECEnv

from .. import core
from ..env import env as wrapped_env
from ..env import raw_env
from ..observation import ObservationEncoder
from ..rules import Rules
from ..training.args import PRECISIONS, Args
from .bench_instructions import MEASURES, YARDSTICK, connect_four, instructions_per_step
from .common import add_rules_arguments, check_output_paths, positive_float, positive_int, rules_from_args


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("bench", help="measure hands/s of the core and steps/s of the AEC env")
    add_rules_arguments(parser)
    parser.add_argument(
        "--batch-sizes", type=positive_int, nargs="+", default=[1, 64, 1024, 8192], help="core batch sizes"
    )
    parser.add_argument("--seconds", type=positive_float, default=2.0, help="time spent on each measurement")
    instead = parser.add_mutually_exclusive_group()
    instead.add_argument(
        "--training",
        action="store_true",
        help="instead: experience collection and update of the trainer (needs torch) at its default batch",
    )
    instead.add_argument(
        "--instructions",
        action="store_true",
        help="instead: instructions per step at B = 1 counted by valgrind (steady where timings drift; a few minutes)",
    )
    instead.add_argument(
        "--search",
        action="store_true",
        help="instead: win rate against --opponent and CPU ms per decision at batch one of search:k=K, per --k",
    )
    instead.add_argument(
        "--web",
        action="store_true",
        help="instead: ms per answer of the web table's API over whole hands (needs the web extra)",
    )
    parser.add_argument(
        "--k", type=positive_int, nargs="+", default=[4, 8, 16, 32, 64, 128, 256], help="with --search: the K swept"
    )
    parser.add_argument("--deals", type=positive_int, default=60, help="with --search: duplicate deal pairs per K")
    parser.add_argument("--opponent", default="hard", help="with --search: the agent played against (agents.make name)")
    parser.add_argument("--seed", type=int, default=1, help="with --search: seed of the deals, agents and timed hands")
    parser.add_argument("--plot", type=Path, default=None, help="with --search: also save a PNG plot here (matplotlib)")
    parser.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="float32",
        help="with --training: the network's arithmetic (as mendikot train --precision)",
    )
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
    return aec_env_rate(wrapped_env(rules) if wrapped else raw_env(rules), seconds, seed)


def aec_env_rate(env: AECEnv, seconds: float, seed: int = 0) -> float:
    """Agent steps/s of any AEC env with an action mask in its observation dict, stepped in
    the loop of :func:`aec_rate` (PettingZoo's ``connect_four_v3`` is the yardstick)."""
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


def training_rate(rules: Rules, seconds: float, pool: bool, precision: str = "float32") -> dict[str, float]:
    """Decisions/s of the trainer's experience collection and where the time goes.

    ``pool=False``: pure self-play (every decision is the network's); ``pool=True``: the
    default opponent pool (rule-based bots with the duplicate baseline, snapshots).
    """
    import torch

    from agents import make

    from ..training.loop import build_network, make_policy, network_spec, pool_weights
    from ..training.selfplay import CollectConfig, collect_hands

    args = Args(rules="standard", precision=precision)
    network = build_network(rules, network_spec(rules, args)).eval()
    policy = make_policy(network, torch.device("cpu"), torch.Generator().manual_seed(0), args)
    bots = [make(name, rules, seed=0) for name in args.pool_bots] if pool else []
    encoder = ObservationEncoder(rules)
    rng = np.random.default_rng(0)
    share = args.pool_share if pool else 0.0
    totals = {"decisions": 0.0, "samples": 0.0, "core": 0.0, "encoder": 0.0, "network": 0.0, "opponents": 0.0}
    spent = 0.0
    while spent < seconds:
        config = CollectConfig(
            args.games, share, args.gamma, args.gae_lambda, args.tens_reward,
            pool_weights(len(bots), 0, args.pool_bot_share), len(bots),
        )  # fmt: skip
        _, stats = collect_hands(rules, policy, bots, rng, encoder, config)
        spent += stats.seconds_total
        totals["decisions"] += stats.all_decisions
        totals["samples"] += stats.decisions
        for key in ("core", "encoder", "network", "opponents"):
            totals[key] += getattr(stats, f"seconds_{key}")
    return {
        "decisions/s": totals["decisions"] / spent,
        "samples/s": totals["samples"] / spent,
        **{f"share {key}": totals[key] / spent for key in ("core", "encoder", "network", "opponents")},
    }


def update_rate(rules: Rules, seconds: float, precision: str = "float32") -> float:
    """Samples/s of the trainer's update: the default network's forward, backward and Adam
    step over minibatches of collected decisions (the PPO losses' own arithmetic is small)."""
    import torch

    from ..training.loop import arithmetic, build_network, make_policy, network_spec
    from ..training.selfplay import CollectConfig, collect_hands

    args = Args(rules="standard", precision=precision)
    network = build_network(rules, network_spec(rules, args))
    policy = make_policy(network, torch.device("cpu"), torch.Generator().manual_seed(0), args)
    config = CollectConfig(args.games, 0.0, args.gamma, args.gae_lambda, args.tens_reward)
    samples, _ = collect_hands(rules, policy, [], np.random.default_rng(0), ObservationEncoder(rules), config)
    observations, masks = torch.from_numpy(samples.observations), torch.from_numpy(samples.masks)
    actions, returns = torch.from_numpy(samples.actions), torch.from_numpy(samples.returns)
    optimizer = torch.optim.Adam(network.parameters(), lr=args.learning_rate)
    minibatches = [slice(start, start + args.minibatch) for start in range(0, len(samples), args.minibatch)]

    def update_once() -> tuple[int, int]:
        for rows in minibatches:
            with arithmetic(args, torch.device("cpu")):
                logits, values = network(observations[rows], masks[rows])
            chosen = torch.log_softmax(logits, -1).gather(1, actions[rows, None]).squeeze(-1)
            loss = -(chosen * returns[rows]).mean() + ((values - returns[rows]) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return len(samples), len(samples)

    return _timed(update_once, seconds)[0]


def run(args: argparse.Namespace) -> int:
    rules = rules_from_args(args)
    print(f"rules: {rules}")
    if args.search:
        check_output_paths(plot_file=None if args.plot is None else str(args.plot))
        from .bench_search import run as run_search  # lazily: the agents package is needed only here

        return run_search(rules, args.k, args.deals, args.opponent, args.seed, args.plot)
    if args.web:
        return _web_times(rules)
    if args.training:
        import torch

        print(
            f"trainer experience collection, batch {Args().games} hands, torch threads {torch.get_num_threads()}, "
            f"{args.precision}"
        )
        for pool in (False, True):
            rates = training_rate(rules, args.seconds, pool, args.precision)
            label = "with the default opponent pool" if pool else "pure self-play"
            shares = ", ".join(f"{k.removeprefix('share ')} {100 * v:.0f}%" for k, v in rates.items() if "share" in k)
            print(
                f"{label:<32} {rates['decisions/s']:>9,.0f} decisions/s  {rates['samples/s']:>9,.0f} samples/s  "
                f"(time: {shares}, rest: bookkeeping)"
            )
        rate = update_rate(rules, args.seconds, args.precision)
        print(f"{'update (forward, backward, Adam)':<32} {rate:>9,.0f} samples/s  (minibatch {Args().minibatch})")
        return 0
    if args.instructions:
        print(f"{'measure (valgrind callgrind)':<34}{'B':>6}{'instructions/step':>26}")
        counts = {}
        for measure, label in MEASURES.items():
            counts[measure] = instructions_per_step(rules, measure)
            print(f"{label:<34}{1:>6}{counts[measure]:>26,.0f}", flush=True)
        print(_ratio_line(counts["wrapped"] / counts[YARDSTICK], "instructions per step"))
        return 0
    print(f"{'measure':<34}{'B':>6}{'hands/s':>12}{'plays/s':>14}")
    for observe in (False, True):
        label = "core + acting seat's observation" if observe else "core (masks + random legal play)"
        for batch in args.batch_sizes:
            hands, plays = core_rate(rules, batch, args.seconds, observe)
            print(f"{label:<34}{batch:>6}{hands:>12,.0f}{plays:>14,.0f}")
    rates = {}
    for measure in ("raw", "wrapped", YARDSTICK):
        env = connect_four() if measure == YARDSTICK else wrapped_env(rules) if measure == "wrapped" else raw_env(rules)
        rates[measure] = aec_env_rate(env, args.seconds)
        print(f"{MEASURES[measure]:<34}{1:>6}{'':>12}{rates[measure]:>14,.0f} steps/s")
    print(_ratio_line(rates["wrapped"] / rates[YARDSTICK], "steps per second"))
    return 0


def _ratio_line(ratio: float, what: str) -> str:
    """The wrapped env's steps per second or instructions per step as a multiple of
    connect_four_v3's, stepped in the same loop."""
    return f"wrapped env() / connect_four_v3: {ratio:.2f}x the {what}"


def _web_times(rules: Rules) -> int:
    """The ``--web`` mode: median and slowest ms of each kind of the web table's answers."""
    from ..web.timing import KINDS, answer_times  # lazily: the web extra is needed only here

    took = answer_times(rules)
    print(f"{'web table answer (ASGI test client, 2 hands)':<56}{'answers':>8}{'median ms':>11}{'slowest ms':>12}")
    for kind, times in took.items():
        ms = sorted(1000 * t for t in times)
        print(f"{KINDS[kind]:<56}{len(ms):>8}{ms[len(ms) // 2]:>11.1f}{ms[-1]:>12.1f}")
    return 0
