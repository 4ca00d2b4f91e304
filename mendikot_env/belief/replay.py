"""Deals replayed through the moves seen, each weighed by how likely a policy was to make them.

:func:`replay_worlds` steps all the sampled deals of one seat through the public history in
lockstep (:func:`~mendikot_env.belief.worlds.replay_start`) and multiplies each deal's weight
by the chance of every other seat's move under the policy (:func:`state_chance` for a policy
that reads the core state, as the rule-based bots do; the policy's probabilities or its
choice otherwise). :class:`Weighing` holds how: the share of chance spread uniformly
(``epsilon``), which moves count and how far behind a deal may fall before it is dropped.
:class:`~mendikot_env.belief.weighing.Belief` and
:func:`~mendikot_env.belief.together.likeliest_together` are built on it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..cards import NUM_ACTIONS, NUM_CARDS, popcount, unpack_sets
from ..core import State, legal_bits, step
from ..infostate import SeatInfo
from ..observation import ObservationEncoder, reads_history
from ..rules import Rules
from .sampler import DealSampler, _encoder
from .worlds import _check_replay, replay_start

# A deterministic policy's move gets probability 1 - EPSILON, and every legal move EPSILON /
# (legal moves) more: a deal where the policy would have played otherwise is unlikely, not
# impossible (people and bots are not perfectly predictable, and one zero would end a deal).
EPSILON = 0.1
# Belief.likeliest drops a deal once its log chance is this far behind the n-th best: a deal one
# move the policy would not have made behind (log(0.9 / 0.025) = 3.6 with four legal moves) is kept, two are not.
LIKELIEST_MARGIN = 5.0


@dataclass(frozen=True)
class Weighing:
    """How the other seats' moves seen are weighed under a policy (:meth:`Belief.likeliest`,
    :func:`replay_worlds`; the search's ``infer`` picks them)."""

    epsilon: float = EPSILON  # the share of a move's chance spread uniformly over the legal moves
    margin: float = LIKELIEST_MARGIN  # with ``keep``: drop deals this far (log chance) behind the keep-th best
    recent: int | None = None  # weigh only the last ``recent`` moves seen (None: all)
    opponents_only: bool = False  # weigh the other team's moves only (the partner's are replayed)
    mix: bool = False  # likeliest: pair the opponents' cards across draws (four players)


def replay_worlds(
    belief: DealSampler,
    hidden: np.ndarray,
    seat: int = 0,
    policy: Any = None,
    weighing: Weighing | None = None,
    keep: int | None = None,
    by_seat: bool = False,
    **options: Any,
) -> tuple[State, np.ndarray]:
    """The sampled deals replayed from the start of the hand through the observed history.

    The moves are public and the same in every deal, so the deals step in lockstep as one
    batch (:func:`~mendikot_env.belief.worlds.replay_start`). With a ``policy``, every move of
    another seat multiplies each deal's weight by its chance under the policy (see
    :meth:`Belief.weigh`), as ``weighing`` says (``options`` change its fields for this call):
    with ``recent``, only the last ``recent`` moves are weighed (the others are replayed);
    with ``opponents_only``, only the moves of the other team. With ``keep``, deals whose log
    weight falls more than ``margin`` below the ``keep``-th best are dropped as the replay goes
    (a weight only falls, so they are unlikely to end among the ``keep`` likeliest), and the
    worlds returned are those left.

    Returns:
        The replayed worlds and their log weights (zeros without a policy): (M,), or with
        ``by_seat`` (M, n) per relative seat of the mover (a seat's moves depend on its own
        cards and the public facts alone, so a deal's weight is the product of its hands').

    Raises:
        ValueError: the replay does not give back the observation (it was altered).
    """
    how = replace(weighing or Weighing(), **options)
    rules, view = belief.rules, belief.view
    n, M = rules.n_players, hidden.shape[0]
    worlds, moves = replay_start(belief, hidden, seat)
    log_weights = np.zeros((M, n) if by_seat else M)
    encoder = _encoder(rules, reads_history(policy))
    score = _match_points(rules, view, seat) if policy is not None else None
    first = 0 if how.recent is None else len(moves) - how.recent  # the first move weighed
    for i, move in enumerate(moves):
        mover = int(worlds.current[0])
        weighed = mover != seat and (not how.opponents_only or (mover - seat) % 2 == 1)
        if policy is not None and weighed and i >= first:
            chance = np.log(_chance(policy, encoder, worlds, mover, move, how.epsilon, score))
            if by_seat:
                log_weights[:, (mover - seat) % n] += chance
            else:
                log_weights += chance
            if keep is not None and log_weights.shape[0] > keep:
                total = log_weights.sum(axis=1) if by_seat else log_weights
                alive = total >= np.partition(total, -keep)[-keep] - how.margin
                if not alive.all():
                    worlds, log_weights = worlds.select(alive), log_weights[alive]
                    if np.ndim(move):
                        move = move[alive]  # the hide: each deal's own band card
        step(worlds, move)
    _check_replay(belief, worlds, seat)
    return worlds, log_weights


def _match_points(rules: Rules, view: SeatInfo, seat: int) -> np.ndarray:
    """(1, 2) match points by absolute team, from the observation's (mine, theirs) / target."""
    points = np.zeros((1, 2))
    points[0, seat % 2], points[0, 1 - seat % 2] = (np.rint(x * rules.target) for x in view.match_score)
    return points


def _chance(
    policy: Any,
    encoder: ObservationEncoder,
    worlds: State,
    mover: int,
    move: np.ndarray | int,
    epsilon: float,
    score: np.ndarray | None,
) -> np.ndarray:
    """(M,) the chance of ``move`` under the policy at ``mover``'s turn in each world."""
    M = worlds.batch_size
    move = np.broadcast_to(np.asarray(move, np.int64), (M,))
    if reads_state(policy):
        return state_chance(policy, worlds, np.arange(M), move, None, epsilon)
    bits = legal_bits(worlds)
    masks = unpack_sets(bits, NUM_ACTIONS).view(bool)
    counts = masks.sum(axis=1)
    chance = np.ones(M)  # a forced move has chance 1: the policy is asked only where there was a choice
    free = np.flatnonzero(counts > 1)
    if free.size == 0:
        return chance
    obs = encoder.encode(worlds, np.full(M, mover), None if score is None else np.repeat(score, M, axis=0), legal=bits)[
        free
    ]
    if callable(probabilities := getattr(policy, "probabilities", None)):
        p = np.asarray(probabilities(obs, masks[free]), np.float64)[np.arange(free.size), move[free]]
    else:
        p = (np.asarray(policy.act(obs, masks[free])) == move[free]).astype(np.float64)
    chance[free] = (1.0 - epsilon) * p + epsilon / counts[free]
    return chance


def reads_state(policy: Any) -> bool:
    """Whether the chance of a move under ``policy`` is its ``act_state`` choice (it reads the
    core state, as the rule-based bots do, and has no ``probabilities``)."""
    return callable(getattr(policy, "act_state", None)) and not callable(getattr(policy, "probabilities", None))


def state_chance(
    policy: Any, worlds: State, rows: np.ndarray, move: np.ndarray, decision: np.ndarray | None, epsilon: float
) -> np.ndarray:
    """(R,) the chance of each row's ``move`` under a policy that :func:`reads_state`, at the
    seat to act in those worlds: ``(1 - epsilon)`` if it plays the move, plus ``epsilon`` over
    the legal moves; a forced move has chance 1. Worlds that share their history (those of one
    ``decision``; None: all of them) and give the mover the same cards (and the same card it
    hid) are the same to it: the policy reads each such hand once."""
    bits = legal_bits(worlds)[rows]
    counts = popcount(bits)
    chance = np.ones(rows.size)
    free = np.flatnonzero(counts > 1)
    if free.size == 0:
        return chance
    games = rows[free]
    mover = worlds.current[games]
    # The key: the hand's 52 bits, and above them the face-down card the mover hid, plus one.
    hid = np.where(worlds.hider[games] == mover, worlds.face_down[games] + 1, 0).astype(np.uint64)
    own = worlds.hands[games, mover] | hid << np.uint64(NUM_CARDS)
    if decision is None:
        _, first, inverse = np.unique(own, return_index=True, return_inverse=True)
    else:
        key = np.stack([decision[free].astype(np.uint64), own], axis=1)
        _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    chosen = policy.act_state(worlds, bits[free], games[first][inverse.reshape(-1)])
    chance[free] = (1.0 - epsilon) * (chosen == move[free]) + epsilon / counts[free]
    return chance
