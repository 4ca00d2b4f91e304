"""Studies of the belief about the hidden cards and of the search agent (notebook 05).

Each function plays hands on the core with given agents and measures what a seat can only
infer: how much probability its belief puts on the true trump suit trick by trick, or on the
true place of every card it cannot see. Logic lives here; the notebook shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.search import team_value

from . import core
from .arena import play_hands
from .belief import Belief, InfoState
from .cards import ASK_ACTION, NUM_ACTIONS, NUM_CARDS, NUM_RANKS, unpack_sets
from .core import NO_CARD, PLAY
from .observation import ObservationEncoder
from .rules import Rules

BeliefOf = Callable[[InfoState], Any]  # a seat's information -> anything with trump_posterior / card_marginals
StepVisit = Callable[[core.State, np.ndarray, np.ndarray], None]  # (state, plain observations, masks)
Visit = Callable[[core.State, int, int], None]  # (one game's state, game index, trick number)


def play_visiting(rules: Rules, agent: Any, hands: int, seed: int, visit: StepVisit) -> core.State:
    """Play ``hands`` hands with ``agent`` at every seat, calling ``visit`` before every step
    with the state, the acting seats' plain observations and their masks (it must not change
    the state), and return the finished hands."""
    encoder = ObservationEncoder(rules)
    state = core.new_hands(rules, hands, rng=seed)
    actions = np.zeros(hands, dtype=np.int64)
    while not state.done.all():
        live = ~state.done
        bits = core.legal_bits(state)
        obs = encoder.encode(state, np.where(live, state.current, 0), legal=bits)
        masks = unpack_sets(bits, NUM_ACTIONS).view(bool)
        visit(state, obs, masks)
        rows = np.flatnonzero(live)
        actions[rows] = agent.act(obs[rows], masks[rows])
        core.step(state, actions, active=live)
    return state


def play_visiting_trick_starts(rules: Rules, agent: Any, hands: int, seed: int, visit: Visit) -> core.State:
    """:func:`play_visiting`, calling ``visit`` once at the start of every trick of every hand
    (before its first card) with that game alone."""
    visited = np.full(hands, -1)

    def at_step(state: core.State, observations: np.ndarray, masks: np.ndarray) -> None:
        starting = ~state.done & (state.phase == PLAY) & (state.trick_size == 0) & (state.trick_no > visited)
        for game in np.flatnonzero(starting):
            visited[game] = state.trick_no[game]
            visit(state.select(np.array([game])), int(game), int(state.trick_no[game]))

    return play_visiting(rules, agent, hands, seed, at_step)


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
    encoder = encoder or ObservationEncoder(rules)
    n = rules.n_players
    prob = np.full((hands, rules.n_tricks, n - 1), np.nan)

    def visit(one: core.State, game: int, trick: int) -> None:
        if one.face_down[0] == NO_CARD:
            return
        true_suit, hider = int(one.face_down[0]) // NUM_RANKS, int(one.hider[0])
        for r in range(1, n):
            obs = encoder.encode(one, np.array([(hider + r) % n]))[0]
            prob[game, trick, r - 1] = belief_of(InfoState(rules, obs)).trump_posterior()[true_suit]

    state = play_visiting_trick_starts(rules, agent, hands, seed, visit)
    return TrumpSharpening(prob=prob, reveal_trick=state.reveal_trick.copy(), hands=hands)


def true_places(one: core.State, seat: int) -> np.ndarray:
    """(n + 1, 52) 0/1: where the cards ``seat`` cannot see truly lie in game 0 of ``one``, in
    the belief's slots (relative seats, then the face-down card). The seat's own cards and the
    revealed band card back in the hider's hand are seen, so they are not among them."""
    n = one.rules.n_players
    truth = np.zeros((n + 1, NUM_CARDS))
    truth[:n] = unpack_sets(np.roll(one.hands[0], -seat))
    if one.face_down[0] != NO_CARD and int(one.hider[0]) != seat:
        truth[n, int(one.face_down[0])] = 1
    truth[0] = 0
    if one.known_card[0] != NO_CARD:
        truth[:, int(one.known_card[0])] = 0
    return truth


@dataclass
class CardInference:
    """Per position (a seat at the start of a trick), the mean chance each belief puts on the
    true place (hand or face-down slot) of the cards that seat cannot see."""

    trick: np.ndarray  # (P,) int64: the trick that was about to start
    chance: dict[str, np.ndarray]  # belief name -> (P,) float64 mean chance on the true places


def card_inference(
    rules: Rules,
    agent: Any,
    hands: int,
    beliefs: dict[str, BeliefOf],
    tricks: tuple[int, ...] = (1, 3, 5),
    seed: int = 0,
) -> CardInference:
    """Play ``hands`` hands with ``agent`` at every seat and, at the start of each trick in
    ``tricks``, score every seat's beliefs on where the cards it cannot see truly are.

    Args:
        beliefs: named builders of a belief from one seat's information (the observation
            holds the history pieces, for policy-weighted beliefs).
    """
    encoder = ObservationEncoder(rules, history=True)
    n = rules.n_players
    trick_of: list[int] = []
    chance: dict[str, list[float]] = {name: [] for name in beliefs}

    def visit(one: core.State, game: int, trick: int) -> None:
        if trick not in tricks:
            return
        for seat in range(n):
            truth = true_places(one, seat)
            info = InfoState(rules, encoder.encode(one, np.array([seat]))[0])
            for name, belief_of in beliefs.items():
                marginals = belief_of(info).card_marginals()
                chance[name].append(float((marginals * truth).sum() / truth.sum()))
            trick_of.append(trick)

    play_visiting_trick_starts(rules, agent, hands, seed, visit)
    return CardInference(np.array(trick_of), {name: np.array(v) for name, v in chance.items()})


@dataclass
class AskValues:
    """At decisions where the player to act may ask for the band card: the search's estimate
    of asking minus its best card, and the same difference realised on the true deal."""

    estimate: np.ndarray  # (D,) float64: search's mean value of asking - of its best card
    realised: np.ndarray  # (D,) float64: outcome after asking - after that card, on the true deal
    asked: np.ndarray  # (D,) bool: the search would have asked here


def ask_values(rules: Rules, agent: Any, search: Any, hands: int, seed: int = 0) -> AskValues:
    """Play ``hands`` hands with ``agent`` at every seat; at every decision where asking for
    the band card is legal, let ``search`` value each move (``search.move_values``) and play
    both asking and the search's best card out on the true deal with ``agent`` at every seat.

    Values are in points for the acting seat's team (:func:`agents.search.team_value`'s
    scale), so the estimate and the outcome are on one scale.
    """
    estimate: list[float] = []
    realised: list[float] = []
    asked: list[bool] = []

    def at_step(state: core.State, observations: np.ndarray, masks: np.ndarray) -> None:
        for game in np.flatnonzero(~state.done & masks[:, ASK_ACTION]):
            moves, values = search.move_values(observations[game], masks[game])
            cards = moves != ASK_ACTION
            best = moves[cards][np.argmax(values[cards])]
            estimate.append(float(values[~cards][0] - values[cards].max()))
            asked.append(bool(values[~cards][0] > values[cards].max()))
            both = state.select(np.array([game, game]))
            core.step(both, np.array([ASK_ACTION, best]))
            play_hands(both, [agent], np.zeros((2, 2), dtype=np.int64))
            sign = 1.0 if state.current[game] % 2 == 0 else -1.0
            outcome = sign * team_value(both)
            realised.append(float(outcome[0] - outcome[1]))

    play_visiting(rules, agent, hands, seed, at_step)
    return AskValues(np.array(estimate), np.array(realised), np.array(asked))
