"""A rule-based advisor's move as extra network input (``Args.advisor``).

Both the network (which saves its advisor's ``Level``) and the agent that plays it (which
appends the advice to every observation) need these, so they live below both.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

import numpy as np

from mendikot_env.cards import NUM_ACTIONS
from mendikot_env.rules import Rules

from .rule_based import Level, RuleBasedAgent


def with_advice(advisor: Any, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """(B, D + 53) float32: the observations with the advisor's chosen action appended as a
    one-hot, the input of a network trained with an advisor (``Args.advisor``).

    The advisor acts on the same observation and mask, so the extra input holds nothing the
    seat could not work out itself.
    """
    advice = np.zeros((len(observations), NUM_ACTIONS), dtype=np.float32)
    advice[np.arange(len(observations)), advisor.act(observations, masks)] = 1.0
    return np.concatenate([np.asarray(observations, dtype=np.float32), advice], axis=1)


def make_advisor(name: str, rules: Rules, level: dict[str, Any] | None = None) -> RuleBasedAgent | None:
    """The advisor a network was trained with (None for ``"none"``): a rule-based agent with
    no tie-breaking jitter, so its advice is a pure function of the observation.

    ``level``: the bot's switches and numbers (its ``Level``) as the network saved them, so an
    agent keeps the advice it was trained with even after the bots are retuned (default: the
    level as the code has it now). A saved spec's level is checked once, by
    :func:`advisor_level` when the network is built; this trusts it.
    """
    if name == "none":
        return None
    return RuleBasedAgent(rules, name, seed=None, spec=None if level is None else Level(**level))


def advisor_level(name: str, rules: Rules, saved: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The ``Level`` of the advisor ``name`` as a plain dict (what networks save): ``saved``
    once checked, else the level as the code has it now; None without an advisor.

    Raises:
        ValueError: ``saved`` is not a ``Level`` (a saved network's spec is read here).
    """
    if name == "none":
        return None
    try:
        level = None if saved is None else Level(**saved)
    except TypeError:
        raise ValueError(
            f"advisor level {saved!r} is not a Level; its fields are {[f.name for f in fields(Level)]}"
        ) from None
    return asdict(RuleBasedAgent(rules, name, seed=None, spec=level).spec)
