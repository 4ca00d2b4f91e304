"""A short, seeded self-play run learns: its agent beats the random agent by a clear margin.

The trainer's other tests pin its plumbing (files, resume, options); this one pins that the
algorithm improves the policy at all. A fixed number of updates (no wall-clock budget), a
tiny network, small batches, one CPU thread: about ten seconds, and the same numbers on
every machine with the same torch.
"""

from __future__ import annotations

from pathlib import Path

import torch

import agents
from agents.network import build_network
from agents.neural import NeuralAgent
from mendikot_env import Rules
from mendikot_env.arena import duplicate_arena
from mendikot_env.training.loop import Args, network_spec, train

ITERATIONS = 25  # PPO updates; 25 reach a win rate of about 0.69 against random (0.47 untrained)
DEALS = 400  # duplicate deal pairs of the final match: a 95% interval of about +-0.035
ARENA_SEED = 2024  # deals no training hand was dealt from


def short_run(out: Path) -> Args:
    """Masked PPO from scratch (no imitation of a teacher), half the games against random."""
    return Args(
        out=str(out),
        seed=0,
        max_iterations=ITERATIONS,
        minutes=1e6,  # the iterations stop the run, never the clock
        games=256,
        hidden=(32,),
        card_hidden=8,
        minibatch=512,
        epochs=2,
        learning_rate=3e-3,
        imitate_iterations=0,
        pool_bots=("random",),
        pool_share=0.5,
        pool_snapshots=0,
        eval_deals=16,
        eval_opponents=("random",),
        eval_every_minutes=1e6,
        checkpoint_every_minutes=1e6,
        progress=False,
        threads=1,
    )


def test_a_short_seeded_run_beats_random_by_a_clear_margin(tmp_path: Path) -> None:
    rules = Rules()
    args = short_run(tmp_path / "run")
    run = train(args)
    learner = agents.load(str(run), rules)
    random = agents.make("random", rules, seed=1)
    trained = duplicate_arena(rules, learner, random, deals=DEALS, seed=ARENA_SEED)

    torch.manual_seed(args.seed)  # the weights the run started from
    untrained_network = build_network(rules, network_spec(rules, args)).eval()
    untrained = duplicate_arena(rules, NeuralAgent(untrained_network, rules), random, deals=DEALS, seed=ARENA_SEED)

    assert trained.ci_low > 0.58, f"the trained agent should beat random clearly: {trained.win_rate:.3f}"
    assert trained.win_rate - untrained.win_rate > 0.1, (
        f"training should have improved on its initial weights: {untrained.win_rate:.3f} -> {trained.win_rate:.3f}"
    )
