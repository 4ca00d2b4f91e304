"""The one agent interface: batched observations and legal-action masks in, actions out.

The same agent object plays in the AEC env (a batch of one), in the arena and in
training. An agent sees only its seat's observation vector and mask, never the hidden
state: everything it may know is in the observation (see ``mendikot_env.observation``).
An agent that reads the public move history declares ``reads_history = True``: the arena
and the Gymnasium wrappers then give it observations with the history pieces
(``ObservationEncoder(rules, history=True)``), and the plain prefix to every other agent.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from mendikot_env import core
from mendikot_env.cards import NUM_ACTIONS, pack_sets
from mendikot_env.rules import Rules, resolve_rules
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

        Raises:
            ValueError: shapes other than these, or a mask row with no legal action
                (:func:`check_batch` says so in the same words for every agent).
        """
        ...


def seed_agent(agent: object, seed: int | None) -> None:
    """Reseed an agent that has randomness (an optional ``seed(seed)`` method)."""
    method = getattr(agent, "seed", None)
    if callable(method):
        method(seed)


def check_plays(agent: object, rules: Rules | str | dict[str, Any], role: str = "agent") -> None:
    """Refuse an agent built for rules whose hands play otherwise than ``rules`` (a different
    observation, or a different game): it would fail at its first act, or quietly play the
    wrong game. Agents without ``rules`` (random) play any. ``rules`` may be a preset name
    or a dict of fields, as ``env()`` takes them.

    Raises:
        ValueError: naming the agent, both rule sets and the fields that differ.
    """
    rules = resolve_rules(rules)
    own = getattr(agent, "rules", None)
    differences = own.hand_differences(rules) if hasattr(own, "hand_differences") else []
    if differences:
        name = getattr(agent, "name", type(agent).__name__)
        raise ValueError(
            f"{role} {name!r} was built for {own}, which plays hands otherwise than {rules} "
            f"({'; '.join(differences)}); make or load it for the rules played"
        )


def check_trained_for(path: object, trained: Rules, rules: Rules | None, error: type[ValueError] = ValueError) -> None:
    """Refuse the agent file ``path``, trained for ``trained``, for ``rules`` (None: any) whose
    hands play otherwise; rules that differ only between hands (rotation, scoring, target,
    direction) pass. The one wording of every agent file reader, each raising its own
    ``error`` type.

    Raises:
        ValueError: (``error``) naming the file, the fields that differ and both rule sets.
    """
    differences = [] if rules is None else trained.hand_differences(rules)
    if differences:
        raise error(f"{path} was trained for hands played otherwise ({'; '.join(differences)}): {trained}, not {rules}")


def check_batch(
    observations: np.ndarray, masks: np.ndarray, size: int | None = None, n_players: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``observations`` as float32 and ``masks`` as bool, refused unless they are (B, size)
    and (B, 53) with a legal action in every row: a network would otherwise fail inside
    torch or numpy on a wrong width, or quietly play an illegal action (its argmax over an
    all-illegal row is action 0). Vectorised, as ``act`` runs at batch sizes of hundreds.

    Args:
        size: the observation width of the agent's rules (``observation_layout(rules).size``);
            None for an agent that reads no observation (any width, returned as given).
        n_players: their player count, named in the error (the width depends on it alone).

    Raises:
        ValueError: naming both shapes and the ones needed, or the first row without a legal action.
    """
    shape, mask_shape = np.shape(observations), np.shape(masks)
    if len(shape) != 2 or shape[1] != (size or shape[1]) or mask_shape != (shape[0], NUM_ACTIONS):
        width = "D" if size is None else f"{size}"
        players = "" if size is None else f" (the width for {n_players} players)"
        needed = f"(B, {width}) observations{players} and (B, {NUM_ACTIONS}) masks"
        raise ValueError(f"act needs {needed}, got {shape} and {mask_shape}")
    legal = np.asarray(masks) != 0
    check_legal_rows(legal)
    return (observations if size is None else np.asarray(observations, dtype=np.float32)), legal


def actions_fault(actions: np.ndarray, size: int) -> str | None:
    """What is wrong with the actions an agent returned for ``size`` decisions (None if
    nothing): not one per decision, or not integers (a cast would play 18.7 as card 18).
    The arena and the Gymnasium wrappers raise it as their own error, naming the agent."""
    if actions.shape != (size,) or actions.dtype.kind not in "iu":
        return f"returned actions of shape {actions.shape} and dtype {actions.dtype}, expected ({size},) integers"
    return None


def check_legal_rows(legal: np.ndarray) -> None:
    """Refuse a (B, A) bool mask with a row of no legal action: no agent can play it legally.

    Raises:
        ValueError: naming the first such row.
    """
    empty = ~legal.any(axis=1)
    if empty.any():
        raise ValueError(f"mask row {int(np.flatnonzero(empty)[0])} has no legal action; every row needs at least one")


def masked_uniform(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(B,) a uniformly random legal action per row of a (B, A) mask (A <= 53, the actions).

    The draw is :func:`mendikot_env.core.random_legal_actions`' (one uniform number per row
    from ``rng``, the k-th legal action), so both give the same actions from the same generator.

    Raises:
        ValueError: a row with no legal action.
    """
    legal = np.asarray(masks) != 0
    check_legal_rows(legal)
    return core.random_legal_actions(pack_sets(legal), rng)


class RandomAgent:
    """Uniform over the legal actions, from its own seeded generator."""

    def __init__(self, seed: int | np.random.Generator | None = None, name: str = "random") -> None:
        self.rng = make_rng(seed)
        self.name = name

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(B,) uniformly random legal actions; the observations are read for their shape only
        (any rule set's width, no copy), so a batch of the wrong shape is refused here too."""
        _, legal = check_batch(observations, masks)  # no float copy of what is not read
        return masked_uniform(legal, self.rng)

    def probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(B, 53) the chance of each action: 1 / legal actions on each legal one (what
        policy-weighted inference weighs a random player's moves by)."""
        _, legal = check_batch(observations, masks)
        return legal / legal.sum(axis=1, keepdims=True)

    def seed(self, seed: int | None) -> None:
        """Restart the generator (wrappers call this on ``reset(seed=...)``)."""
        self.rng = make_rng(seed)
