"""The likeliest deals of many beliefs at once: one replay steps the deals of every decision.

A search that values many decisions in one call (:meth:`agents.search.SearchAgent.values`,
which labels expert iteration's targets) asks each decision's belief for its likeliest deals
(:meth:`~mendikot_env.belief.Belief.likeliest` with ``mix``). One decision at a time, the
replay calls the policy once per move seen on a few dozen deals, and the cost of a call, not
of a deal, dominates. Here the deals of all decisions whose histories are equally long step
as one core batch, so the policy is called once per move for all of them. Each decision's
deals are drawn as :meth:`Belief.likeliest` draws them, from one generator in another order
(all decisions' draws first): the same distribution, other samples; with one decision, the
very same deals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import State, step
from .replay import EPSILON, reads_state, state_chance
from .weighing import Belief, _mixed_deals
from .worlds import _check_replay, replay_start


def likeliest_together(
    beliefs: Sequence[Belief], policy: Any, n: int, draws: int, rng: np.random.Generator, seat: int = 0
) -> list[State]:
    """``belief.likeliest(policy, n, draws, rng, seat, mix=True)`` of every belief, replayed
    together: for four players with the history pieces and a policy that reads the core
    state (``act_state``, as the rule-based bots do); any other belief is asked on its own.

    Args:
        beliefs: the decisions' beliefs (one rules).
        policy: the policy that weighs the opponents' moves seen.
        n: deals kept per decision; draws: deals drawn per decision.
        rng: the generator of the draws and of the order of equally likely pairs.
        seat: the observer's absolute seat in the worlds.
    """
    together = [i for i, belief in enumerate(beliefs) if _pairs(belief) and reads_state(policy)]
    worlds: list[State | None] = [None] * len(beliefs)
    for i in sorted(set(range(len(beliefs))) - set(together)):
        worlds[i] = beliefs[i].likeliest(policy, n, draws, rng, seat, mix=True)
    chosen = [beliefs[i] for i in together]
    hidden = [belief.sample_hands(draws, rng) for belief in chosen]
    by_seat = replay_together(chosen, hidden, seat, policy)
    mixed = [_mixed_deals(b, h, w, n, rng) for b, h, w in zip(chosen, hidden, by_seat, strict=True)]
    for i, replayed in zip(together, replay_states(chosen, mixed, seat), strict=True):
        worlds[i] = replayed
    return worlds  # type: ignore[return-value]


def _pairs(belief: Belief) -> bool:
    """Whether ``likeliest(mix=True)`` pairs the opponents' draws for this belief."""
    return belief.rules.n_players == 4 and belief.constraints.holds is None and belief.view.history is not None


def replay_together(
    beliefs: Sequence[Belief], hidden: Sequence[np.ndarray], seat: int, policy: Any, epsilon: float = EPSILON
) -> list[np.ndarray]:
    """Per belief, the (M, n) log chance of each opponent's moves seen under ``policy`` in each
    of its deals, by relative seat (``replay_worlds(..., opponents_only=True, by_seat=True)``)."""
    return [weights for _, weights in _replay(beliefs, hidden, seat, policy, epsilon)]


def replay_states(beliefs: Sequence[Belief], hidden: Sequence[np.ndarray], seat: int) -> list[State]:
    """Per belief, its deals replayed through the moves seen (``replay_worlds(belief, hidden, seat)[0]``)."""
    return [worlds for worlds, _ in _replay(beliefs, hidden, seat, None, EPSILON)]


def _replay(
    beliefs: Sequence[Belief], hidden: Sequence[np.ndarray], seat: int, policy: Any, epsilon: float
) -> list[tuple[State, np.ndarray]]:
    """Every belief's deals replayed, those of equally long histories in one batch, with the
    opponents' moves weighed by ``policy`` where one is given."""
    starts = [replay_start(belief, deals, seat) for belief, deals in zip(beliefs, hidden, strict=True)]
    out: list[tuple[State, np.ndarray] | None] = [None] * len(beliefs)
    lengths = np.array([len(moves) for _, moves in starts])
    for length in np.unique(lengths):
        group = np.flatnonzero(lengths == length)
        sizes = np.array([starts[i][0].batch_size for i in group])
        worlds = State.concat([starts[i][0] for i in group]) if group.size > 1 else starts[group[0]][0]
        decision = np.repeat(np.arange(group.size), sizes)
        n = worlds.hands.shape[1]
        log_weights = np.zeros((worlds.batch_size, n))
        for k in range(int(length)):
            moves = np.concatenate(
                [
                    np.broadcast_to(np.asarray(starts[i][1][k], np.int64), (m,))
                    for i, m in zip(group, sizes, strict=True)
                ]
            )
            if policy is not None:
                relative = (worlds.current - seat) % n
                rows = np.flatnonzero(relative % 2 == 1)  # the opponents' moves
                if rows.size:
                    chance = state_chance(policy, worlds, rows, moves[rows], decision[rows], epsilon)
                    log_weights[rows, relative[rows]] += np.log(chance)
            step(worlds, moves)
        ends = np.cumsum(sizes)
        for j, i in enumerate(group):
            part = np.arange(ends[j] - sizes[j], ends[j])
            replayed = worlds.select(part)
            _check_replay(beliefs[i], replayed, seat)
            out[i] = (replayed, log_weights[part])
    return out  # type: ignore[return-value]
