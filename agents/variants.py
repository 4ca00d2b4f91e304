"""Variants of an agent for experiments: change one decision, keep every other one.

Research questions such as "what is asking for the band card worth?" or "which card
should lie face down?" are answered by playing an agent against a copy of itself that
differs in one decision only. These wrappers take any agent (usually a rule-based one)
and change the action mask it sees (:class:`NeverAsk`) or the face-down card it lays
(:class:`HideChoice`); everything else is the base agent's own play.

Example:
    >>> from mendikot_env import Rules
    >>> from agents import make
    >>> rules = Rules.preset("band")
    >>> never = NeverAsk(make("hard", rules))
    >>> longest = HideChoice(make("hard", rules), "longest")
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mendikot_env.cards import ASK_ACTION, NUM_RANKS, TEN_RANK, unpack_sets
from mendikot_env.core import HIDE
from mendikot_env.infostate import SeatInfo
from mendikot_env.observation import decode_info, observation_layout, reads_history
from mendikot_env.rules import Rules
from mendikot_env.seeding import make_rng

from .base import seed_agent

# Milton Work points of each rank (J=1, Q=2, K=3, A=4), plus 1 for the ten: the cards
# that win tricks and the card that wins the hand.
HONOUR_POINTS = np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4], dtype=np.float64)
HONOUR_POINTS[TEN_RANK] = 1
HIDE_STRATEGIES = ("longest", "strongest", "shortest", "random")


def _hiding(info: SeatInfo) -> np.ndarray:
    """(B,) bool: the rows whose seat is choosing the face-down card."""
    return info.phase == HIDE


class NeverAsk:
    """The base agent with the ask action (52) removed from its mask: it never asks for the
    face-down card, so the band card comes up only when the hider plays it or, with
    ``reveal="auto"``, by itself."""

    def __init__(self, base: Any, name: str | None = None) -> None:
        self.base = base
        self.name = name or f"{getattr(base, 'name', 'agent')}-never-asks"

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        masks = np.array(masks, dtype=bool, copy=True)
        # Asking is legal only for a player who cannot follow, and then every card is legal
        # too, so a row never loses its last legal action here.
        masks[:, ASK_ACTION] = False
        return self.base.act(observations, masks)

    def seed(self, seed: int | None) -> None:
        method = getattr(self.base, "seed", None)
        if callable(method):
            method(seed)


class HideChoice:
    """The base agent, except that the face-down card (band hukum) is chosen by a fixed rule.

    Args:
        base: the agent that plays every other decision.
        strategy: which suit becomes the hidden trump:
            ``"longest"`` the longest suit (ties: more honour points),
            ``"strongest"`` the suit with the most honour points (A=4, K=3, Q=2, J=1, 10=1;
            ties: the longer suit), ``"shortest"`` the shortest suit (a deliberately bad
            choice, as a yardstick), ``"random"`` a uniformly random card of the hand.
        rank: which card of the chosen suit lies face down: ``"high"`` (the top card, which
            cannot be caught while it is hidden) or ``"low"``.
        seed: seeds the ``"random"`` strategy.
        name: display name (default: the base's name and the strategy).
        rules: the rules (default: the base agent's ``rules``), for the observation layout.
    """

    def __init__(
        self,
        base: Any,
        strategy: str,
        rank: str = "high",
        seed: int | None = None,
        name: str | None = None,
        rules: Rules | None = None,
    ) -> None:
        if strategy not in HIDE_STRATEGIES:
            raise ValueError(f"unknown hide strategy {strategy!r}; choose one of {list(HIDE_STRATEGIES)}")
        if rank not in ("high", "low"):
            raise ValueError(f"rank must be 'high' or 'low', got {rank!r}")
        if rules is None and not isinstance(rules := getattr(base, "rules", None), Rules):
            raise ValueError("HideChoice needs the rules: pass rules=... (the base agent has no .rules)")
        self.base = base
        self.strategy = strategy
        self.rank = rank
        self.rules = rules
        self.rng = make_rng(seed)
        self.name = name or f"{getattr(base, 'name', 'agent')}-hide-{strategy}"

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations, dtype=np.float32)
        info = decode_info(self.rules, obs)
        hiding = _hiding(info)
        actions = np.zeros(obs.shape[0], dtype=np.int64)
        if not hiding.all():
            actions[~hiding] = self.base.act(obs[~hiding], np.asarray(masks)[~hiding])
        if hiding.any():
            actions[hiding] = self.choose(unpack_sets(info.hand[hiding]).view(bool))
        return actions

    def choose(self, hands: np.ndarray) -> np.ndarray:
        """(B,) the card to lay face down from (B, 52) bool hands."""
        B = hands.shape[0]
        if self.strategy == "random":
            weights = hands / hands.sum(axis=1, keepdims=True)
            pick = self.rng.random(B)[:, None] < np.cumsum(weights, axis=1)
            return pick.argmax(axis=1).astype(np.int64)
        suits = hands.reshape(B, 4, NUM_RANKS)
        length = suits.sum(axis=2).astype(np.float64)
        points = (suits * HONOUR_POINTS).sum(axis=2)
        if self.strategy == "longest":
            score = 100 * length + points
        elif self.strategy == "strongest":
            score = 100 * points + length
        else:  # shortest suit that is not empty (ties: fewer points)
            score = -100 * length - points
        score = np.where(length > 0, score, -np.inf)
        suit = score.argmax(axis=1)
        held = suits[np.arange(B), suit]  # (B, 13)
        rank = NUM_RANKS - 1 - held[:, ::-1].argmax(axis=1) if self.rank == "high" else held.argmax(axis=1)
        return (suit * NUM_RANKS + rank).astype(np.int64)

    def seed(self, seed: int | None) -> None:
        self.rng = make_rng(seed)
        method = getattr(self.base, "seed", None)
        if callable(method):
            method(seed)


class HideWith:
    """The base agent, except that another agent chooses the face-down card (band hukum):
    how good is one agent's choice of trump when everything else is played alike?

    Args:
        base: the agent that plays every other decision.
        chooser: the agent that lays the face-down card.
        rules: the rules (for the observation layout).
        name: display name (default: the base's and the chooser's names).
    """

    def __init__(self, base: Any, chooser: Any, rules: Rules, name: str | None = None) -> None:
        self.base, self.chooser = base, chooser
        self.rules, self.layout = rules, observation_layout(rules)
        # it reads the history pieces if one of its agents does, and gives each agent its width
        self.reads_history = reads_history(base) or reads_history(chooser)
        self.name = name or f"{getattr(base, 'name', 'agent')}-hides-as-{getattr(chooser, 'name', 'agent')}"

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = np.asarray(observations, dtype=np.float32), np.asarray(masks)
        hiding = _hiding(decode_info(self.rules, obs))
        actions = np.zeros(obs.shape[0], dtype=np.int64)
        for rows, agent in ((~hiding, self.base), (hiding, self.chooser)):
            if rows.any():
                width = obs.shape[1] if reads_history(agent) else self.layout.size
                actions[rows] = agent.act(obs[rows, :width], masks[rows])
        return actions

    def seed(self, seed: int | None) -> None:
        seed_agent(self.base, seed)
        seed_agent(self.chooser, seed)
