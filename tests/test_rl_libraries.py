"""The env as the RL libraries use it: Tianshou, TorchRL, SB3 MaskablePPO and RLlib.

Each test follows the library's own documented pattern for a PettingZoo classic (AEC) env
and wraps the env in a :class:`Referee` that checks every action that reaches it against
the acting agent's mask. Nothing is skipped: these libraries are the ``rl`` extra.
"""

from __future__ import annotations

import os
import sys
from typing import Any

# Tianshou JIT-compiles its return helpers with numba when an algorithm is built (about 15 s
# on CI's 2 cores, for a run of a few hundred steps): plain Python is enough here.
if "numba" not in sys.modules:
    os.environ.setdefault("NUMBA_DISABLE_JIT", "1")

import gymnasium
import numpy as np
import pettingzoo.utils
import torch
from pettingzoo.utils import BaseWrapper

import mendikot_env
from mendikot_env.cards import NUM_ACTIONS

RULES = "band"  # the richest preset: the face-down choice and asking (action 52) are both used
HAND_STEPS = (53, 54)  # band, 4 players: hide a card, play 52 cards, ask at most once


class Referee(BaseWrapper):
    """Records each action that reaches the env and whether the acting agent's mask allowed it.

    Also records ``env.rewards`` once per episode, at the step that ends it.
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.illegal: list[tuple[str, Any]] = []
        self.actions = 0
        self.final_rewards: list[dict[str, float]] = []
        self._ended = False

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        super().reset(seed=seed, options=options)
        self._ended = False

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                self.illegal.append((agent, action))
        else:
            mask = self.env.observe(agent)["action_mask"]
            if action is None or not (0 <= int(action) < NUM_ACTIONS and mask[int(action)] == 1):
                self.illegal.append((agent, action))
            self.actions += 1
        super().step(action)
        if not self._ended and self.agents and all(self.terminations[a] for a in self.agents):
            self.final_rewards.append(dict(self.rewards))
            self._ended = True


def refereed_env(**kwargs: Any) -> Referee:
    return Referee(mendikot_env.env(RULES, **kwargs))


def assert_hand_results(final_rewards: list[dict[str, float]], hands: int) -> None:
    """Every finished hand paid +1 to one team and -1 to the other (an illegal action would not)."""
    assert len(final_rewards) >= hands
    for rewards in final_rewards:
        assert sorted(rewards) == [f"player_{i}" for i in range(4)]
        assert {rewards["player_0"], rewards["player_1"]} == {1.0, -1.0}
        assert rewards["player_0"] == rewards["player_2"] and rewards["player_1"] == rewards["player_3"]


# ------------------------------------------------------------------------------ Tianshou


def test_tianshou_pettingzoo_env_and_collector() -> None:
    from tianshou.algorithm.multiagent.marl import MARLDispatcher
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv

    referees: list[Referee] = []

    def make() -> PettingZooEnv:
        referees.append(refereed_env())
        return PettingZooEnv(referees[-1])

    env = make()
    obs, info = env.reset(seed=0)
    assert obs["obs"].dtype == np.float32 and len(obs["mask"]) == NUM_ACTIONS and info == {}
    assert obs["agent_id"] == env.env.agent_selection and sum(obs["mask"]) >= 1
    action = int(np.flatnonzero(obs["mask"])[0])
    obs, rewards, terminated, truncated, _ = env.step(action)
    assert rewards == [0.0] * 4 and not terminated and not truncated

    # Tianshou's multi-agent pattern: one masked random policy per agent, a vector env, a collector.
    algorithms = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space) for _ in env.agents]
    policy = MARLDispatcher(algorithms, env).create_policy()
    envs = DummyVectorEnv([make, make])
    collector = Collector(policy, envs, VectorReplayBuffer(2000, 2))
    envs.seed([1, 2])
    collector.reset()
    stats = collector.collect(n_episode=4)

    assert stats.n_collected_episodes == 4
    assert np.isin(stats.lens, HAND_STEPS).all()
    batch = collector.buffer[: len(collector.buffer)]
    assert batch.obs.obs.dtype == np.float32 and batch.obs.mask.dtype == bool
    assert np.isin(batch.rew[batch.done], (-1.0, 1.0)).all()
    assert (batch.rew[~batch.done] == 0).all()
    assert all(not r.illegal for r in referees)
    assert_hand_results([res for r in referees for res in r.final_rewards], 4)


# ------------------------------------------------------------------------------- TorchRL


def test_torchrl_pettingzoo_wrapper_rollout() -> None:
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import check_env_specs

    torch.manual_seed(0)  # TorchRL's random actions come from torch's generator
    referee = refereed_env()
    env = PettingZooWrapper(env=referee, use_mask=True, seed=0)  # AEC: one acting agent per step
    assert env.group_map == {f"player_{i}": [f"player_{i}"] for i in range(4)}
    check_env_specs(env)  # TorchRL's own check: a short rollout matches every declared spec

    rollout = env.rollout(200, break_when_any_done=True)  # random actions under each action_mask
    assert rollout.batch_size[0] in HAND_STEPS
    assert rollout["next", "done"][-1].item() and not rollout["next", "done"][:-1].any()
    acting = torch.stack([rollout[f"player_{i}", "mask"][:, 0] for i in range(4)], dim=1)
    assert (acting.sum(dim=1) == 1).all()  # exactly one agent acts at each step
    finals = []
    for i in range(4):
        group = rollout[f"player_{i}"]
        assert group["observation", "observation"].dtype == torch.float32
        assert group["action_mask"].dtype == torch.bool
        taken = group["action"][:, 0][group["mask"][:, 0]]
        legal = group["action_mask"][:, 0][group["mask"][:, 0]]
        assert legal.gather(1, taken[:, None]).all()  # what it chose was legal under its mask
        rewards = rollout["next", f"player_{i}", "reward"][:, 0, 0]
        assert (rewards[:-1] == 0).all()
        finals.append(rewards[-1].item())
    assert finals[0] == finals[2] == -finals[1] == -finals[3] and abs(finals[0]) == 1.0
    assert not referee.illegal and referee.actions >= min(HAND_STEPS)


# ----------------------------------------------------------------------- SB3 MaskablePPO


class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gymnasium.Env):
    """PettingZoo's SB3 action-mask tutorial wrapper: one policy plays every seat.

    (``gymnasium.Env`` as a second base is the tutorial's fix for Gymnasium >= 1.0, whose
    wrappers accept only ``gymnasium.Env`` instances.)
    """

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed, options)
        self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
        self.action_space = super().action_space(self.possible_agents[0])
        return self.observe(self.agent_selection), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        current_agent = self.agent_selection
        super().step(action)
        next_agent = self.agent_selection
        return (
            self.observe(next_agent),
            self._cumulative_rewards[current_agent],
            self.terminations[current_agent],
            self.truncations[current_agent],
            self.infos[current_agent],
        )

    def observe(self, agent: str) -> np.ndarray:
        return super().observe(agent)["observation"]

    def action_mask(self) -> np.ndarray:
        return super().observe(self.agent_selection)["action_mask"]


def test_sb3_maskable_ppo_action_mask_tutorial() -> None:
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from sb3_contrib.common.wrappers import ActionMasker

    referee = refereed_env()
    env = SB3ActionMaskWrapper(referee)
    env.reset(seed=0)  # must come first: it sets the spaces
    env = ActionMasker(env, lambda e: e.action_mask())
    model = MaskablePPO(
        MaskableActorCriticPolicy,
        env,
        n_steps=128,
        batch_size=64,
        n_epochs=1,
        seed=0,
        policy_kwargs={"net_arch": [32]},
        device="cpu",
    )
    model.learn(total_timesteps=256)

    episodes = list(model.ep_info_buffer)
    assert len(episodes) >= 3
    assert all(ep["l"] in HAND_STEPS and ep["r"] in (-1.0, 1.0) for ep in episodes)
    assert not referee.illegal and referee.actions >= 256
    assert_hand_results(referee.final_rewards, len(episodes))

    # The tutorial's evaluation loop: the trained model plays every seat of one hand.
    aec = refereed_env()
    aec.reset(seed=5)
    for _agent in aec.agent_iter():
        obs, reward, termination, truncation, info = aec.last()
        if termination or truncation:
            action = None
        else:
            action = int(model.predict(obs["observation"], action_masks=obs["action_mask"], deterministic=True)[0])
        aec.step(action)
    assert not aec.illegal and aec.actions in HAND_STEPS
    assert_hand_results(aec.final_rewards, 1)


# ----------------------------------------------------------------------------- RLlib


def test_rllib_pettingzoo_env_reset_step_with_masks() -> None:
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    referee = refereed_env()
    env = PettingZooEnv(referee)
    assert set(env.possible_agents) == {f"player_{i}" for i in range(4)}
    obs, infos = env.reset(seed=3)
    assert infos == {}
    rng = np.random.default_rng(0)
    steps = 0
    while steps < 200:
        steps += 1
        ((agent, agent_obs),) = obs.items()  # only the agent to act gets an observation
        assert agent_obs["observation"].dtype == np.float32 and agent_obs["action_mask"].dtype == np.int8
        action = int(rng.choice(np.flatnonzero(agent_obs["action_mask"])))
        obs, rewards, terminateds, truncateds, infos = env.step({agent: action})
        if terminateds["__all__"]:
            break
        assert set(rewards.values()) == {0.0}
    assert steps in HAND_STEPS
    # At the end every agent gets its last observation and its reward (each stepped with None).
    assert set(obs) == set(rewards) == {f"player_{i}" for i in range(4)}
    assert rewards["player_0"] == rewards["player_2"] == -rewards["player_1"] == -rewards["player_3"]
    assert abs(rewards["player_0"]) == 1.0
    assert all(r["result"]["winner"] in (0, 1) for r in infos.values())
    assert not referee.agents and not referee.illegal


def test_rllib_env_check_survives_an_unmasked_action() -> None:
    """RLlib's pre-flight check steps an unmasked random action: the env ends that hand, no crash."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    referee = refereed_env()
    env = PettingZooEnv(referee)
    for _ in range(20):  # a random action of 53 is illegal most of the time
        check_multiagent_environments(env)
    assert referee.illegal
    # PettingZoo's TerminateIllegalWrapper ended those hands: -1 to the offender, 0 to the others.
    assert any(sorted(r.values()) == [-1.0, 0.0, 0.0, 0.0] for r in referee.final_rewards)
