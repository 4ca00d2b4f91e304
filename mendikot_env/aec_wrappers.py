"""PettingZoo's classic AEC wrappers, reading the per-step attributes straight from the env.

``env()`` wraps the raw env as every PettingZoo classic env does: TerminateIllegalWrapper,
then AssertOutOfBoundsWrapper, then OrderEnforcingWrapper. PettingZoo's wrappers reach
the raw env's ``agents``, ``agent_selection``, ``rewards``, ``terminations``,
``truncations``, ``infos`` and ``_cumulative_rewards`` through ``__getattr__``, one failed
lookup per layer: about 36 such calls per agent step, a fifth of a wrapped step's time.
The classes here are PettingZoo's own, subclassed only to read those attributes from the
raw env directly (from a user's wrapper instead, if one sits below them), and to write
them there: setting ``env.agent_selection`` on the wrapper sets the raw env's, where
PettingZoo's wrapper would keep a copy of its own that shadows it.
Everything else, the illegal-move handling, the bounds check and the order checks (the
"cannot be accessed before reset" errors included), is PettingZoo's behaviour, and
``isinstance`` checks against PettingZoo's classes still hold.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env import ActionType, AgentID, ObsType

# Read by last(), agent_iter() and the wrappers' step() and observe() on every agent step.
HOT_ATTRIBUTES = ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos", "_cumulative_rewards")
# Those OrderEnforcingWrapper refuses before its reset() (PettingZoo's list, less num_agents).
REFUSED_BEFORE_RESET = frozenset(HOT_ATTRIBUTES) - {"_cumulative_rewards"}


def _forwarded(name: str, order_checked: bool) -> property:
    """A property that reads and writes ``name`` on the env that holds it (``_source_env``).

    The getter is an ``attrgetter`` (C code, no Python frame), except on the
    OrderEnforcingWrapper for the attributes it refuses before reset. Either way an
    AttributeError sends Python on to the wrapper's ``__getattr__``, which raises
    PettingZoo's own error ("cannot be accessed before reset").
    """

    def set_(self: Any, value: Any) -> None:
        setattr(self._source_env, name, value)

    read = attrgetter(f"_source_env.{name}")

    def read_after_reset(self: Any) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return read(self)

    return property(read_after_reset if order_checked else read, set_, doc=f"The wrapped env's ``{name}``.")


class _DirectAttributes:
    """Mixin: HOT_ATTRIBUTES as properties of the env that holds them (set below).

    That env is the raw env when the layers below are ours (as in ``env()``); below any
    other wrapper it is that wrapper, so a wrapper that keeps its own ``rewards`` (reward
    shaping, say) is read as PettingZoo's forwarding would read it.
    """

    def __init__(self, env: AECEnv, *args: Any, **kwargs: Any) -> None:
        super().__init__(env, *args, **kwargs)  # type: ignore[call-arg]
        self._source_env = env._source_env if isinstance(env, _DirectAttributes) else env


class _DirectAttributesAfterReset(_DirectAttributes):
    """The same, with OrderEnforcingWrapper's check that its own reset() came first."""


for _name in HOT_ATTRIBUTES:
    setattr(_DirectAttributes, _name, _forwarded(_name, order_checked=False))
    setattr(_DirectAttributesAfterReset, _name, _forwarded(_name, _name in REFUSED_BEFORE_RESET))


class TerminateIllegalWrapper(_DirectAttributes, wrappers.TerminateIllegalWrapper[AgentID, ObsType, ActionType]):
    """PettingZoo's TerminateIllegalWrapper, reading the per-step attributes directly."""


class AssertOutOfBoundsWrapper(_DirectAttributes, wrappers.AssertOutOfBoundsWrapper[AgentID, ObsType, ActionType]):
    """PettingZoo's AssertOutOfBoundsWrapper, reading the per-step attributes directly."""


class OrderEnforcingWrapper(_DirectAttributesAfterReset, wrappers.OrderEnforcingWrapper[AgentID, ObsType, ActionType]):
    """PettingZoo's OrderEnforcingWrapper, reading the per-step attributes directly."""

    def __str__(self) -> str:
        # PettingZoo prints the inner env for its own class only; keep "mendikot_v0".
        return str(self.env)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``last()``; after the episode (every agent gone) the raw env's clear
        error rather than a KeyError on the last agent's name."""
        try:
            return super().last(observe)
        except KeyError:
            if self.agents:
                raise
            return self.unwrapped.last(observe)  # raises its after-the-episode error


def wrap(raw: AECEnv, illegal_reward: float = -1) -> AECEnv:
    """``raw`` in the classic wrappers, innermost first, as PettingZoo's classic envs do."""
    wrapped: AECEnv = TerminateIllegalWrapper(raw, illegal_reward=illegal_reward)
    wrapped = AssertOutOfBoundsWrapper(wrapped)
    return OrderEnforcingWrapper(wrapped)
