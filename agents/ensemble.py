"""An agent that plays the averaged policy of several trained networks.

Independent training runs of one recipe end a point or so apart against the same bot (the
band table in the README): each has learnt its own mistakes. Averaging their policies keeps
the moves they agree on; where they disagree, the more confident network decides.
``agents.load("runs/a+runs/b")`` builds one from run folders or ``.pt`` files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from mendikot_env.rules import Rules

# What joins the members in an agent spec: agents.load("runs/a+runs/b").
MEMBER_SEPARATOR = "+"


@runtime_checkable
class PolicyAgent(Protocol):
    """A member: an agent that can hand over its whole masked policy, not only its choice."""

    name: str
    rules: Rules

    def probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(B, 53) its masked policy; a batch :func:`agents.base.check_batch` refuses, refused."""
        ...


class EnsembleAgent:
    """Greedy on the mean of the members' masked policies.

    Args:
        members: two or more agents with ``probabilities(observations, masks)`` (trained
            networks, ``agents.neural.NeuralAgent``), all for the same rules. A member given
            twice counts twice (a way to weight it).
        name: the agent's name in tables (default: the members' names joined by ``+``).

    Raises:
        ValueError: fewer than two members, a member without ``probabilities``, or members
            trained for different rules.
    """

    def __init__(self, members: Sequence[PolicyAgent], name: str | None = None) -> None:
        members = list(members)
        _check_members(members)
        self.members = members
        self.rules: Rules = members[0].rules
        self.name = name or MEMBER_SEPARATOR.join(member.name for member in members)

    def probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(B, 53) float32: the mean of the members' policies (zero on illegal actions)."""
        total = self.members[0].probabilities(observations, masks)
        for member in self.members[1:]:
            total = total + member.probabilities(observations, masks)
        return total / len(self.members)

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(B,) the most likely legal action of the mean policy (ties: the lowest id)."""
        policy = self.probabilities(observations, masks)  # the members refuse a bad batch (check_batch)
        # Members put exactly 0 on illegal actions; the where() keeps the choice legal even so
        # if one of them does not.
        return np.where(np.asarray(masks) != 0, policy, -1.0).argmax(axis=1).astype(np.int64)


def _check_members(members: list[PolicyAgent]) -> None:
    """Refuse ``members`` that cannot be averaged, naming the first reason found."""
    if len(members) < 2:
        raise ValueError(f"an ensemble needs at least two members, got {len(members)}")
    for member in members:
        if not isinstance(member, PolicyAgent):
            label = getattr(member, "name", type(member).__name__)
            raise ValueError(
                f"ensemble member {label!r} has no policy to average; members must be trained networks "
                "(run folders or .pt files)"
            )
    # They average policies over one observation, so hands must play the same way; rotation,
    # scoring, target and direction may differ (see Rules.hand_differences).
    if any(members[0].rules.hand_differences(member.rules) for member in members[1:]):
        listing = "; ".join(f"{member.name}: {member.rules}" for member in members)
        raise ValueError(f"ensemble members must play hands by one set of rules, but they were trained for {listing}")
