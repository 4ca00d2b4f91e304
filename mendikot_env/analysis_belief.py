"""Studies of the belief about the hidden cards and of the search agent (notebook 05).

Each function plays hands on the core with given agents and measures one thing a seat can
only infer: how much probability its belief puts on the true trump suit trick by trick, or
how the cards dealt compare with what it believes. Logic lives here; the notebook shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import core
from .belief import Belief, InfoState
from .cards import NUM_RANKS
from .core import NO_CARD, PLAY
from .observation import ObservationEncoder
from .rules import Rules


@dataclass
class TrumpSharpening:
    """The probability a seat's belief puts on the true hidden trump suit at the start of
    every trick while the band card is still face down.

    ``prob[h, t, r]`` is for hand h, trick t, and the seat r + 1 places after the hider
    (so r = 1 is the hider's partner with four players); NaN once the card is up.
    """

    prob: np.ndarray  # (hands, tricks, n - 1) float64
    reveal_trick: np.ndarray  # (hands,) int64: the trick in which the card came up
    hands: int

    def by_trick(self, relative: int) -> tuple[np.ndarray, np.ndarray]:
        """(tricks,) mean probability on the true suit and (tricks,) hands still face down,
        for the seat ``relative`` places after the hider (1 .. n - 1)."""
        values = self.prob[:, :, relative - 1]
        counts = np.sum(~np.isnan(values), axis=0)
        with np.errstate(invalid="ignore"):
            mean = np.nansum(values, axis=0) / np.maximum(counts, 1)
        return np.where(counts > 0, mean, np.nan), counts


BeliefOf = Callable[[InfoState], Belief]


def trump_sharpening(
    rules: Rules,
    agent: Any,
    hands: int,
    seed: int = 0,
    belief_of: BeliefOf = Belief,
    encoder: ObservationEncoder | None = None,
) -> TrumpSharpening:
    """Play ``hands`` band-hukum hands with ``agent`` at every seat and read, at the start of
    each trick, every non-hider's belief about the trump suit.

    Args:
        rules: band hukum rules (``trump="band"``).
        agent: plays every seat.
        hands: hands played (one batch).
        seed: deals the hands.
        belief_of: builds the belief from one seat's information (uniform by default).
        encoder: encodes what the beliefs read (an encoder with the history piece gives it
            to them); the agent always sees the plain observation.
    """
    plain = ObservationEncoder(rules)
    encoder = encoder or plain
    state = core.new_hands(rules, hands, rng=seed)
    n = rules.n_players
    prob = np.full((hands, rules.n_tricks, n - 1), np.nan)
    seen = np.zeros((hands, rules.n_tricks), dtype=bool)
    while not state.done.all():
        live = ~state.done
        starting = live & (state.phase == PLAY) & (state.trick_size == 0) & (state.face_down != NO_CARD)
        for game in np.flatnonzero(starting & ~seen[np.arange(hands), np.minimum(state.trick_no, rules.n_tricks - 1)]):
            trick, hider = int(state.trick_no[game]), int(state.hider[game])
            seen[game, trick] = True
            one = state.select(np.array([game]))
            true_suit = int(state.face_down[game]) // NUM_RANKS
            for r in range(1, n):
                obs = encoder.encode(one, np.array([(hider + r) % n]))[0]
                prob[game, trick, r - 1] = belief_of(InfoState(rules, obs)).trump_posterior()[true_suit]
        seats = np.where(live, state.current, 0)
        bits = core.legal_bits(state)
        obs = plain.encode(state, seats, legal=bits)
        masks = core.legal_action_mask(state)
        actions = np.zeros(hands, dtype=np.int64)
        rows = np.flatnonzero(live)
        actions[rows] = agent.act(obs[rows], masks[rows])
        core.step(state, actions, active=live)
    return TrumpSharpening(prob=prob, reveal_trick=state.reveal_trick.copy(), hands=hands)
