"""The classic wrappers of env(): PettingZoo's classes, with the per-step attributes read
from the raw env instead of through three layers of __getattr__."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from pettingzoo.utils import wrappers
from pettingzoo.utils.wrappers.base import BaseWrapper
from support import play_episode, random_policy

import mendikot_env
from mendikot_env import aec_wrappers
from mendikot_env.aec_wrappers import HOT_ATTRIBUTES


def play_hand(env, seed: int) -> int:
    """Random legal play of one hand from reset(seed); returns the agent steps."""
    env.reset(seed=seed)
    return len(play_episode(env, random_policy(seed)))


def test_layers_are_pettingzoo_classes_in_the_classic_order() -> None:
    env = mendikot_env.env()
    assert isinstance(env, wrappers.OrderEnforcingWrapper)
    assert isinstance(env.env, wrappers.AssertOutOfBoundsWrapper)
    assert isinstance(env.env.env, wrappers.TerminateIllegalWrapper)
    assert isinstance(env.env.env.env, mendikot_env.raw_env)
    assert str(env) == "mendikot_v0"
    for ours in (aec_wrappers.OrderEnforcingWrapper, aec_wrappers.TerminateIllegalWrapper):
        assert ours[str, dict, int].__origin__ is ours  # generic, as PettingZoo's classes are


@pytest.mark.parametrize("rules", ["standard", "band", "dehla_pakad"])
def test_no_attribute_goes_through_getattr_during_play(rules: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    forward = BaseWrapper.__getattr__

    def counting(self, name: str):
        calls.append(name)
        return forward(self, name)

    monkeypatch.setattr(BaseWrapper, "__getattr__", counting)
    env = mendikot_env.env(rules, episode="match", target=2)
    steps = play_hand(env, seed=3)
    assert steps > 13
    assert not [name for name in calls if name in HOT_ATTRIBUTES]


def test_every_layer_reads_and_writes_the_source_envs_attributes() -> None:
    env = mendikot_env.env()
    env.reset(seed=1)
    raw = env.unwrapped
    for layer in (env, env.env, env.env.env):
        for name in HOT_ATTRIBUTES:
            assert getattr(layer, name) is getattr(raw, name), name
    replacement = {agent: 0.5 for agent in raw.agents}
    env.env.rewards = replacement
    assert raw.rewards is replacement and env.rewards is replacement
    assert "rewards" not in vars(env.env)  # written through, not shadowed on the wrapper


def test_before_reset_the_order_wrapper_refuses_as_pettingzoo_does() -> None:
    env = mendikot_env.env()
    for name in ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos"):
        with pytest.raises(AttributeError, match=f"{name} cannot be accessed before reset"):
            getattr(env, name)
        assert not hasattr(env, name)
    env.reset(seed=0)
    assert env.agents == env.unwrapped.possible_agents


def test_the_order_check_is_the_wrappers_own_reset_not_the_raw_envs() -> None:
    env = mendikot_env.env()
    env.unwrapped.reset(seed=0)  # the raw env has every attribute now; the wrapper was not reset
    for name in ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos"):
        with pytest.raises(AttributeError, match=f"{name} cannot be accessed before reset"):
            getattr(env, name)
    assert env._cumulative_rewards is env.unwrapped._cumulative_rewards  # PettingZoo lets this one through


class ShapedRewards(BaseWrapper):
    """A user's wrapper that keeps its own rewards (a small bonus every step)."""

    def reset(self, seed=None, options=None) -> None:
        super().reset(seed=seed, options=options)
        self.rewards = dict(self.env.rewards)

    def step(self, action) -> None:
        super().step(action)
        self.rewards = {agent: reward + 0.01 for agent, reward in self.env.rewards.items()}


def test_a_users_wrapper_below_ours_is_read_as_pettingzoos_wrappers_read_it() -> None:
    ours = aec_wrappers.wrap(ShapedRewards(mendikot_env.raw_env()))
    theirs = wrappers.OrderEnforcingWrapper(
        wrappers.AssertOutOfBoundsWrapper(
            wrappers.TerminateIllegalWrapper(ShapedRewards(mendikot_env.raw_env()), illegal_reward=-1)
        )
    )
    for env in (ours, theirs):
        env.reset(seed=6)
        env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    assert ours.rewards == theirs.rewards == {agent: 0.01 for agent in ours.agents}


@pytest.mark.parametrize("clone", [pickle.loads, copy.deepcopy], ids=["pickle", "deepcopy"])
def test_a_clone_reads_its_own_source_env(clone) -> None:
    env = mendikot_env.env()
    env.reset(seed=2)
    copied = clone(pickle.dumps(env)) if clone is pickle.loads else clone(env)
    assert copied.unwrapped is not env.unwrapped
    for layer in (copied, copied.env, copied.env.env):
        assert layer.agent_selection == env.agent_selection
        assert layer.terminations is copied.unwrapped.terminations
    assert play_hand(copied, seed=4) == play_hand(env, seed=4)


def test_an_illegal_move_still_ends_the_hand_against_the_offender(caplog: pytest.LogCaptureFixture) -> None:
    env = mendikot_env.env()
    env.reset(seed=5)
    offender = env.agent_selection
    illegal = int(np.flatnonzero(env.last()[0]["action_mask"] == 0)[0])
    env.step(illegal)
    assert "Illegal move made" in caplog.text
    assert all(env.terminations.values()) and all(env.truncations.values())
    assert env.rewards[offender] == -1
    assert env.unwrapped.terminations is env.terminations
