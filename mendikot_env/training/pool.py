"""The opponent pool of a self-play run: rule-based bots, frozen snapshots of the learner,
and how often each is drawn. Plumbing beside :mod:`mendikot_env.training.loop`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from agents.network import build_network, playing_weights
from agents.neural import NeuralAgent

from ..rules import Rules
from ..seeding import derived_seed
from .args import Args, playing_spec

if TYPE_CHECKING:
    from agents.base import Agent
    from agents.network import Network


def option_agent(option: str, spec: str, rules: Rules, seed: int | None = None) -> Agent:
    """``agents.load(spec, rules, seed)`` for a training option: an agent name, a search spec,
    a run folder or an agent file, checked to play ``rules``; an error names the option."""
    from agents import load

    try:
        return load(spec, rules, seed=seed)
    except ValueError as error:  # an unknown name, a missing file, no shipped network for these rules
        raise ValueError(f"{option}: {error}") from None


def bot_seeds(
    pool_bots: Sequence[str], seed: int, teacher: str, advisor: str, imitate_iterations: int
) -> list[tuple[str, int | None] | None]:
    """The name and seed of each pool bot (``seed``, ``seed + 1``, ...), then the teacher's
    (None without a warm start): what a resume compares to keep the bots' generators."""
    pool = [(name, derived_seed(seed + i)) for i, name in enumerate(pool_bots)]
    # A teacher that is also the advisor breaks ties as the advice does (lowest card id).
    teacher_seed = None if teacher == advisor else seed
    return [*pool, (teacher, teacher_seed) if imitate_iterations else None]


def make_pool_bots_and_teacher(args: Args, rules: Rules) -> tuple[list[Agent], Agent | None]:
    """The rule-based (or trained) agents of the pool, seeded ``seed``, ``seed + 1``, ..., and
    the warm start's teacher (None without a warm start); an unknown name is a ValueError
    naming its option, raised before the run folder is touched."""
    *pool, teacher = bot_seeds(args.pool_bots, args.seed, args.teacher, args.advisor, args.imitate_iterations)
    bots = [option_agent("--pool-bots (Args.pool_bots)", name, rules, seed) for name, seed in pool]
    return bots, None if teacher is None else option_agent("--teacher (Args.teacher)", teacher[0], rules, teacher[1])


def check_eval_opponents(args: Args, rules: Rules) -> None:
    """Make each evaluation opponent once: the first evaluation may come only after the whole
    budget, and an unknown name must fail before the training, not after it."""
    for name in args.eval_opponents:
        option_agent("--eval-opponents (Args.eval_opponents)", name, rules)


def snapshot_agent(
    weights: dict[str, torch.Tensor],
    rules: Rules,
    args: Args,
    device: torch.device,
    advisor_level: dict[str, Any] | None = None,
) -> NeuralAgent:
    """A frozen past learner for the opponent pool (samples from its policy)."""
    network = build_network(rules, playing_spec(rules, args, advisor_level)).to(device)
    # Pools of runs saved before snapshots left the critic out still hold its weights.
    network.load_state_dict(playing_weights(weights))
    greedy = args.algorithm == "dmc"  # Q-values are not logits: a DMC snapshot plays its best action
    return NeuralAgent(
        network, rules, greedy=greedy, seed=args.seed, device=device, name="snapshot", precision=args.precision
    )


def newest(snapshots: list[Any], keep: int) -> list[Any]:
    """The last ``keep`` snapshots; none for 0 (``snapshots[-0:]`` would keep them all)."""
    return snapshots[max(len(snapshots) - keep, 0) :]


def grow_pool(snapshots: list[dict[str, torch.Tensor]], network: Network, keep: int) -> list[dict[str, torch.Tensor]]:
    """The pool with a frozen copy of the learner added, the oldest dropped beyond ``keep``
    (with 0 no copy is made: the pool is the bots alone)."""
    if keep == 0:
        return []
    frozen = {k: v.detach().cpu().clone() for k, v in network.playing_state_dict().items()}
    return newest([*snapshots, frozen], keep)


def duplicated_opponents(args: Args, n_bots: int, n_opponents: int) -> int:
    """How many of the pool's opponents (bots first, then snapshots) get the duplicate
    baseline: none, the bots, or with ``duplicate_snapshots`` every one."""
    if not args.duplicate_baseline:
        return 0
    return n_opponents if args.duplicate_snapshots else n_bots


def pool_weights(n_bots: int, n_snapshots: int, bot_share: float) -> np.ndarray:
    """How often each opponent is drawn: ``bot_share`` split over the bots, the rest over the
    snapshots (all to the bots while there is no snapshot yet)."""
    if n_snapshots == 0 or n_bots == 0:
        return np.ones(n_bots + n_snapshots)
    return np.concatenate([np.full(n_bots, bot_share / n_bots), np.full(n_snapshots, (1 - bot_share) / n_snapshots)])
