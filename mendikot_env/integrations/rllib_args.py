"""The settings of an RLlib run (``mendikot train-rllib`` has one option per field).

Kept apart from ``rllib.py`` so the command line can list the options without importing ray.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mendikot_env.checks import check_choice
from mendikot_env.rules import Rules, resolve_rules
from mendikot_env.run_folder import check_output_name
from mendikot_env.training.args import INF, check_ranges, check_types  # no torch import
from mendikot_env.training.args import RANGES as TRAINER_RANGES

ACTIVATIONS = ("tanh", "relu")  # the hidden layers' activation (Args.activation)
# Ranges of the numeric options, as (low, high, low_included): RLlib itself fails late (after
# Ray has started and the algorithm is built) or not at all. The PPO settings both trainers
# share take the self-play trainer's ranges.
SHARED_WITH_TRAINER = ("epochs", "seed", "hidden", "learning_rate", "entropy_coef", "gamma", "gae_lambda")
RANGES: dict[str, tuple[float, float, bool]] = {
    **{name: TRAINER_RANGES[name] for name in SHARED_WITH_TRAINER},
    "iterations": (1, INF, True),
    "league_size": (1, INF, True),
    "env_runners": (0, INF, True),
    "envs_per_runner": (1, INF, True),
    "learners": (0, INF, True),
    "checkpoint_every": (1, INF, True),
    "train_batch_size": (1, INF, True),
    "minibatch_size": (1, INF, True),
    "eval_deals": (0, INF, True),
    "min_episodes": (1, INF, True),
    "gpus_per_learner": (0.0, INF, True),
    "win_rate_threshold": (-1.0, 1.0, True),  # below 0: every check adds a snapshot
}


@dataclass
class Args:
    """Everything an RLlib run depends on (``mendikot train-rllib`` has one option per field)."""

    rules: str | dict[str, Any] = "standard"
    """rules preset name; in Python also a Rules or a dict of its fields"""
    rule_fields: dict[str, Any] = field(default_factory=dict)
    """rules fields that override the preset (e.g. {"n_players": 6})"""
    out: str = "runs/rllib"
    """run folder: RLlib checkpoint, agent.rllib export, metrics.jsonl, args.json"""
    iterations: int = 20
    """training iterations (each samples train_batch_size env steps, then updates)"""
    env_runners: int = 1
    """RLlib env runners (sampling processes); 0 samples in the driver"""
    envs_per_runner: int = 8
    """envs stepped by each env runner (batched forward passes: ~3x the steps/s of 1)"""
    learners: int = 0
    """remote learners (0: one learner in the driver); on a GPU cluster, one per GPU"""
    gpus_per_learner: float = 0.0
    """GPUs per learner"""
    seed: int = 0
    """seeds RLlib (env runners, network init)"""
    hidden: tuple[int, ...] = (256, 256)
    """hidden layer sizes of actor and critic"""
    activation: str = "tanh"
    """hidden activation: tanh or relu"""
    train_batch_size: int = 4000
    """env steps per iteration and learner"""
    minibatch_size: int = 512
    """samples per gradient step"""
    epochs: int = 4
    """passes over each batch"""
    learning_rate: float = 3e-4
    """Adam step size"""
    gamma: float = 1.0
    """discount (1: a hand is short and only its result counts)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    entropy_coef: float = 0.01
    """entropy bonus"""
    league_size: int = 4
    """frozen snapshot slots the learner plays against"""
    win_rate_threshold: float = 0.6
    """add a snapshot of the learner when its win rate against the league is above this"""
    min_episodes: int = 200
    """hands against the current league before the threshold is checked (also the win-rate window)"""
    eval_deals: int = 64
    """deal pairs per iteration in the duplicate arena against eval_opponent (0: no arena)"""
    eval_opponent: str = "medium"
    """agent name the exported policy is evaluated against"""
    checkpoint_every: int = 5
    """iterations between RLlib checkpoints (the last iteration always saves)"""

    def __post_init__(self) -> None:
        check_types(self)
        check_output_name("--out (Args.out)", self.out, "run folder")
        check_choice("activation", self.activation, ACTIVATIONS)
        check_ranges(self, RANGES)
        if self.minibatch_size > self.train_batch_size:
            raise ValueError(
                f"--minibatch-size {self.minibatch_size} must be at most --train-batch-size {self.train_batch_size}"
            )

    def check_eval_opponent(self) -> None:
        """An unknown --eval-opponent fails before Ray starts, not after the first iterations.
        Not in ``__post_init__``: making the agent may load a network (torch)."""
        if not self.eval_deals:
            return
        from agents import make

        try:
            make(self.eval_opponent, self.resolved_rules())
        except ValueError as error:  # it lists the known agents
            raise ValueError(f"--eval-opponent: {error}") from None

    def resolved_rules(self) -> Rules:
        return resolve_rules(self.rules, **self.rule_fields)
