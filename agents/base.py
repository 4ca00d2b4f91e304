"""The one agent interface: batched observations and legal-action masks in, actions out.

The same agent object plays in the AEC env (a batch of one), in the arena and in
training. An agent sees only its seat's observation vector and mask, never the hidden
state: everything it may know is in the observation (see ``mendikot_env.observation``).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from mendikot_env.seeding import make_rng


@runtime_checkable
class Agent(Protocol):
    """Anything with ``act(observations, masks) -> actions`` is an agent."""

    name: str

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Choose one legal action per row.

        Args:
            observations: (B, D) float32 observations of the seats to act.
            masks: (B, 53) legal-action masks (bool or 0/1 integers) of those seats.

        Returns:
            (B,) int64 actions, each legal under its mask.
        """
        ...


def seed_agent(agent: object, seed: int | None) -> None:
    """Reseed an agent that has randomness (an optional ``seed(seed)`` method)."""
    method = getattr(agent, "seed", None)
    if callable(method):
        method(seed)


def check_plays(agent: object, rules: object, role: str = "agent") -> None:
    """Refuse an agent built for rules whose hands play otherwise than ``rules`` (a different
    observation, or a different game): it would fail at its first act, or quietly play the
    wrong game. Agents without ``rules`` (random) play any.

    Raises:
        ValueError: naming the agent, both rule sets and the fields that differ.
    """
    own = getattr(agent, "rules", None)
    differences = own.hand_differences(rules) if hasattr(own, "hand_differences") else []
    if differences:
        name = getattr(agent, "name", type(agent).__name__)
        raise ValueError(
            f"{role} {name!r} was built for {own}, which plays hands otherwise than {rules} "
            f"({'; '.join(differences)}); make or load it for the rules played"
        )


def masked_uniform(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(B,) a uniformly random legal action per row of a (B, A) mask."""
    legal = np.asarray(masks) != 0
    count = legal.sum(axis=1)
    if (count == 0).any():
        raise ValueError(f"mask row {int(np.flatnonzero(count == 0)[0])} has no legal action")
    pick = (rng.random(legal.shape[0]) * count).astype(np.int64)
    return np.argmax(np.cumsum(legal, axis=1) > pick[:, None], axis=1).astype(np.int64)


class RandomAgent:
    """Uniform over the legal actions, from its own seeded generator."""

    def __init__(self, seed: int | np.random.Generator | None = None, name: str = "random") -> None:
        self.rng = make_rng(seed)
        self.name = name

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return masked_uniform(masks, self.rng)

    def seed(self, seed: int | None) -> None:
        """Restart the generator (wrappers call this on ``reset(seed=...)``)."""
        self.rng = make_rng(seed)
