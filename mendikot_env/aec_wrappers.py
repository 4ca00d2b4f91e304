"""PettingZoo's classic AEC wrappers, reading the per-step attributes straight from the env.

``env()`` wraps the raw env as every PettingZoo classic env does: TerminateIllegalWrapper,
then AssertOutOfBoundsWrapper, then OrderEnforcingWrapper. PettingZoo's wrappers reach
the raw env's ``agents``, ``agent_selection``, ``rewards``, ``terminations``,
``truncations``, ``infos`` and ``_cumulative_rewards`` through ``__getattr__``, one failed
lookup per layer: about 36 such calls per agent step, a sixth of a wrapped step. The
classes here are PettingZoo's own, subclassed only to read those attributes from the raw
env directly (and write them there). Everything else, the illegal-move handling, the
bounds check and the order checks (such as the "cannot be accessed before reset" error),
is PettingZoo's code, and ``isinstance`` checks against PettingZoo's classes still hold.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

# Read by last(), agent_iter() and the wrappers' step() and observe() on every agent step.
HOT_ATTRIBUTES = ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos", "_cumulative_rewards")


def _forwarded(name: str) -> property:
    """A property that reads and writes ``name`` on the raw env.

    The getter is an ``attrgetter`` (C code, no Python frame). Before reset the raw env has
    none of these attributes: its AttributeError sends Python on to the wrapper's
    ``__getattr__``, which raises PettingZoo's own "cannot be accessed before reset" error.
    """

    def set_(self: Any, value: Any) -> None:
        setattr(self._raw_env, name, value)

    return property(attrgetter(f"_raw_env.{name}"), set_, doc=f"The raw env's ``{name}``.")


class _DirectAttributes:
    """Mixin: HOT_ATTRIBUTES as properties of the raw env (set below)."""

    def __init__(self, env: AECEnv, *args: Any, **kwargs: Any) -> None:
        super().__init__(env, *args, **kwargs)  # type: ignore[call-arg]
        self._raw_env = env.unwrapped


for _name in HOT_ATTRIBUTES:
    setattr(_DirectAttributes, _name, _forwarded(_name))


class TerminateIllegalWrapper(_DirectAttributes, wrappers.TerminateIllegalWrapper):
    """PettingZoo's TerminateIllegalWrapper, reading the per-step attributes from the raw env."""


class AssertOutOfBoundsWrapper(_DirectAttributes, wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's AssertOutOfBoundsWrapper, reading the per-step attributes from the raw env."""


class OrderEnforcingWrapper(_DirectAttributes, wrappers.OrderEnforcingWrapper):
    """PettingZoo's OrderEnforcingWrapper, reading the per-step attributes from the raw env."""

    def __str__(self) -> str:
        # PettingZoo prints the inner env for its own class only; keep "mendikot_v0".
        return str(self.env)


def wrap(raw: AECEnv, illegal_reward: float = -1) -> AECEnv:
    """``raw`` in the classic wrappers, innermost first, as PettingZoo's classic envs do."""
    wrapped: AECEnv = TerminateIllegalWrapper(raw, illegal_reward=illegal_reward)
    wrapped = AssertOutOfBoundsWrapper(wrapped)
    return OrderEnforcingWrapper(wrapped)
