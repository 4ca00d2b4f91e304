"""Ray RLlib integration: the env, a masked PPO module and league self-play (extra ``rllib``).

Our own training loop (``mendikot train``) is the fast path on one machine; RLlib is how a
run scales out to a cluster. Everything here uses RLlib's new API stack:

* :class:`MendikotRLlibEnv`: the AEC env behind RLlib's ``PettingZooEnv``, with each
  observation keyed the way RLlib's action-masking RLModule example expects:
  ``{"observations": (D,) float32, "action_mask": (53,) float32}``. :func:`register`
  also registers it by name (``"mendikot"``) for ``config.environment("mendikot")``.
* :class:`MaskedPPOModule`: an MLP actor and critic; illegal actions get logit
  ``FLOAT_MIN``, so no illegal action is ever sampled.
* League self-play (:func:`ppo_config`): in each hand one team is played by the learning
  module ``learner`` and the other by one of ``league_size`` frozen snapshot modules.
  :class:`LeagueCallback` copies the learner into the oldest snapshot whenever it beats
  the current snapshots (win rate over the last episodes above a threshold).
* :func:`train`: the loop behind ``mendikot train-rllib``: RLlib checkpoints, per-iteration
  metrics and an export (``agent.rllib``) that ``agents.load`` plays with numpy only.

Example:
    >>> args = Args(rules="band", iterations=2, out="runs/band-rllib")
    >>> run_folder = train(args)            # ray.init(): local, or the cluster at RAY_ADDRESS
"""

from __future__ import annotations

import functools
import json
import math
import time
import zlib
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from pettingzoo.utils import BaseWrapper
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS
from ray.rllib.utils.torch_utils import FLOAT_MIN
from ray.tune.registry import register_env
from torch import nn

from agents.policy_file import SUFFIX, MLPPolicyAgent, save_policy_file
from mendikot_env.cards import NUM_ACTIONS
from mendikot_env.env import env as make_aec_env
from mendikot_env.rules import Rules
from mendikot_env.run_folder import RLLIB_RUN_FILES, prepare_run_folder

from .rllib_args import Args

ENV_NAME = "mendikot"
LEARNER = "learner"  # the module that trains; both seats of its team share it
SNAPSHOT = "snapshot_{}"  # frozen copies of the learner that play the other team
WIN_RATE_KEY = "league_learner_win_rate"  # env-runner metric: learner's hands won (draws 0.5)


# ----------------------------------------------------------------------------- the env


class RLlibObservations(BaseWrapper):
    """Renames the observation dict to RLlib's action-masking keys, mask as float32."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        base = env.observation_space(env.possible_agents[0])
        self._space = spaces.Dict(
            {
                "observations": base["observation"],
                "action_mask": spaces.Box(0.0, 1.0, (NUM_ACTIONS,), dtype=np.float32),
            }
        )

    def observation_space(self, agent: str) -> spaces.Space:
        return self._space

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.env.observe(agent)
        return {"observations": obs["observation"], "action_mask": obs["action_mask"].astype(np.float32)}


class MendikotRLlibEnv(PettingZooEnv):
    """The Mendikot AEC env (with the standard wrappers) as an RLlib ``MultiAgentEnv``.

    Args:
        config: RLlib's env_config: ``rules`` (a preset name, a dict of fields or a Rules;
            default standard) and any other keyword of ``mendikot_env.env`` (e.g. ``reward``).
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        options = dict(config or {})
        rules = options.pop("rules", None)
        super().__init__(RLlibObservations(make_aec_env(rules, **options)))

    def render(self) -> Any:
        # PettingZooEnv.render passes a render_mode argument; PettingZoo's render() takes none.
        return self.env.render()


def env_creator(config: dict[str, Any] | None = None) -> MendikotRLlibEnv:
    """What ``register_env`` calls with each env runner's env_config."""
    return MendikotRLlibEnv(config)


def register(name: str = ENV_NAME) -> str:
    """Register the env with RLlib under ``name`` (for ``config.environment(name)``)."""
    register_env(name, env_creator)
    return name


# -------------------------------------------------------------------------- the module


def _mlp(width: int, hidden: tuple[int, ...], activation: str) -> tuple[nn.Sequential, int]:
    layers: list[nn.Module] = []
    for size in hidden:
        layers += [nn.Linear(width, size), nn.Tanh() if activation == "tanh" else nn.ReLU()]
        width = size
    return nn.Sequential(*layers), width


class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """Actor and critic MLPs on ``obs["observations"]``; logits masked by ``obs["action_mask"]``.

    model_config: ``hidden`` (layer sizes, default (256, 256)) and ``activation``
    (``"tanh"`` or ``"relu"``). The actor is what :func:`export_policy` writes out.
    """

    def setup(self) -> None:
        config = self.model_config or {}
        hidden = tuple(int(h) for h in config.get("hidden", (256, 256)))
        activation = config.get("activation", "tanh")
        obs_size = int(self.observation_space["observations"].shape[0])
        self.torso, width = _mlp(obs_size, hidden, activation)
        self.pi = nn.Linear(width, NUM_ACTIONS)
        nn.init.orthogonal_(self.pi.weight, gain=0.01)  # a near-uniform first policy
        nn.init.zeros_(self.pi.bias)
        self.vf_torso, width = _mlp(obs_size, hidden, activation)
        self.vf = nn.Linear(width, 1)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits = self.pi(self.torso(obs["observations"]))
        # FLOAT_MIN, not -inf: a terminal observation (all-zero mask) still gives finite logits.
        return {Columns.ACTION_DIST_INPUTS: logits.masked_fill(obs["action_mask"] == 0, FLOAT_MIN)}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.vf(self.vf_torso(batch[Columns.OBS]["observations"])).squeeze(-1)


def module_spec(hidden: tuple[int, ...] = (256, 256), activation: str = "tanh") -> RLModuleSpec:
    """The spec of one :class:`MaskedPPOModule` (learner and snapshots alike)."""
    return RLModuleSpec(module_class=MaskedPPOModule, model_config={"hidden": hidden, "activation": activation})


def actor_layers(state: dict[str, Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    """(weight (in, out), bias) of the actor's Linear layers from a module state dict."""
    weights = {k: np.asarray(v.detach().cpu() if torch.is_tensor(v) else v, np.float32) for k, v in state.items()}
    torso = sorted(int(k.split(".")[1]) for k in weights if k.startswith("torso.") and k.endswith(".weight"))
    names = [f"torso.{i}" for i in torso] + ["pi"]
    return [(weights[f"{n}.weight"].T, weights[f"{n}.bias"]) for n in names]


def export_policy(state: dict[str, Any], path: str | Path, rules: Rules, activation: str = "tanh") -> Path:
    """Write the actor of a :class:`MaskedPPOModule` state dict as a ``.rllib`` policy file."""
    return save_policy_file(path, actor_layers(state), rules, activation, extra={"trained_with": "rllib"})


# --------------------------------------------------------------------------- the league


def seat_to_module(agent_id: str, episode: Any, league_size: int = 1, **kwargs: Any) -> str:
    """Seat -> module for one hand: one team is the learner, the other one snapshot.

    The episode id picks both (crc32, so every seat of a hand agrees in any process):
    the learner's team alternates between hands and the opponent is a uniform snapshot.
    """
    key = zlib.crc32(str(episode.id_).encode())
    seat = int(agent_id.rsplit("_", 1)[1])
    if seat % 2 == key % 2:
        return LEARNER
    return SNAPSHOT.format((key // 2) % league_size)


class LeagueCallback(RLlibCallback):
    """Logs the learner's win rate; adds a snapshot of it when it beats the league.

    Args:
        league_size: number of snapshot slots (a ring: a new snapshot replaces the oldest).
        win_rate_threshold: add a snapshot when the learner's win rate is above this.
        min_episodes: hands the learner must play against the current league first; also
            the win-rate window, so each check sees only hands against the current league.

    The snapshot weights are part of RLlib's checkpoint; these counters restart on restore.
    """

    def __init__(self, league_size: int = 4, win_rate_threshold: float = 0.6, min_episodes: int = 200) -> None:
        super().__init__()
        self.league_size = league_size
        self.win_rate_threshold = win_rate_threshold
        self.min_episodes = min_episodes
        self.snapshots_added = 0
        self.episodes_at_last_snapshot = 0

    def on_algorithm_init(self, *, algorithm: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        # Every snapshot starts as the learner's initial weights (a near-random, legal player).
        self._copy_learner(algorithm, [SNAPSHOT.format(k) for k in range(self.league_size)])

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        rewards = episode.get_rewards()
        for agent_id, values in rewards.items():
            if episode.module_for(agent_id) == LEARNER and len(values):
                final = float(values[-1])
                score = 1.0 if final > 0 else 0.0 if final < 0 else 0.5
                metrics_logger.log_value(WIN_RATE_KEY, score, reduce="mean", window=self.min_episodes)
                return

    def on_train_result(self, *, algorithm: Any, metrics_logger: Any = None, result: dict, **kwargs: Any) -> None:
        runners = result.get(ENV_RUNNER_RESULTS, {})
        win_rate = runners.get(WIN_RATE_KEY, math.nan)
        episodes = int(runners.get("num_episodes_lifetime", 0))
        added = False
        if win_rate > self.win_rate_threshold and episodes - self.episodes_at_last_snapshot >= self.min_episodes:
            slot = SNAPSHOT.format(self.snapshots_added % self.league_size)
            self._copy_learner(algorithm, [slot])
            self.snapshots_added += 1
            self.episodes_at_last_snapshot = episodes
            added = True
        result["league"] = {"snapshots_added": self.snapshots_added, "added_now": added, "win_rate": win_rate}

    @staticmethod
    def _copy_learner(algorithm: Any, slots: list[str]) -> None:
        weights = algorithm.learner_group.get_weights([LEARNER])[LEARNER]
        algorithm.learner_group.set_weights({slot: weights for slot in slots})
        algorithm.env_runner_group.sync_weights(
            from_worker_or_learner_group=algorithm.learner_group, policies=slots, inference_only=True
        )


# ------------------------------------------------------------------------ configuration


def ppo_config(args: Args) -> PPOConfig:
    """The masked-PPO league self-play configuration of ``args``.

    Only ``env_runners``, ``learners`` and ``gpus_per_learner`` change between a laptop
    and a cluster; the same config runs on both.
    """
    rules = args.resolved_rules()
    snapshots = [SNAPSHOT.format(k) for k in range(args.league_size)]
    spec = module_spec(tuple(args.hidden), args.activation)
    return (
        PPOConfig()
        .environment(MendikotRLlibEnv, env_config={"rules": rules.to_dict()})
        .framework("torch")
        .env_runners(num_env_runners=args.env_runners, num_envs_per_env_runner=args.envs_per_runner)
        .learners(num_learners=args.learners, num_gpus_per_learner=args.gpus_per_learner)
        .training(
            train_batch_size_per_learner=args.train_batch_size,
            minibatch_size=args.minibatch_size,
            num_epochs=args.epochs,
            lr=args.learning_rate,
            gamma=args.gamma,
            lambda_=args.gae_lambda,
            entropy_coeff=args.entropy_coef,
        )
        .multi_agent(
            policies={LEARNER, *snapshots},
            policy_mapping_fn=functools.partial(seat_to_module, league_size=args.league_size),
            policies_to_train=[LEARNER],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={m: spec for m in (LEARNER, *snapshots)}))
        .callbacks(
            functools.partial(
                LeagueCallback,
                league_size=args.league_size,
                win_rate_threshold=args.win_rate_threshold,
                min_episodes=args.min_episodes,
            )
        )
        .debugging(seed=args.seed)
    )


def learner_agent(algorithm: Any, rules: Rules, activation: str = "tanh") -> MLPPolicyAgent:
    """The learner's current actor as a numpy agent (greedy), for the arena."""
    state = algorithm.learner_group.get_weights([LEARNER])[LEARNER]
    return MLPPolicyAgent(actor_layers(state), rules, activation=activation, name="rllib")


# ------------------------------------------------------------------------------ training


def _summary(result: dict[str, Any], seconds: float, rules: Rules) -> dict[str, Any]:
    """One metrics row of an iteration (CleanRL-style keys)."""
    runners = result.get(ENV_RUNNER_RESULTS, {})
    steps = float(runners.get("num_env_steps_sampled", 0) or 0)
    sampling = float(result.get("timers", {}).get("env_runner_sampling_timer", math.nan))
    # A module's episode return sums its seats; per seat it is the hand's +1 / -1 / 0.
    seats_per_team = rules.n_players // 2
    returns = runners.get("module_episode_returns_mean", {})
    return {
        "iteration": int(result.get("training_iteration", 0)),
        "charts/env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0) or 0),
        "charts/env_steps_per_s": steps / seconds if seconds > 0 else math.nan,
        "charts/sampling_env_steps_per_s": steps / sampling if sampling > 0 else math.nan,
        "charts/episodes": int(runners.get("num_episodes_lifetime", 0) or 0),
        "charts/learner_return": float(returns.get(LEARNER, math.nan)) / seats_per_team,
        "charts/learner_win_rate_vs_league": float(result.get("league", {}).get("win_rate", math.nan)),
        "charts/snapshots_added": int(result.get("league", {}).get("snapshots_added", 0)),
        "time/iteration_s": seconds,
    }


def train(args: Args, log: Any = print, config: PPOConfig | None = None, overwrite: bool = False) -> Path:
    """Run ``args.iterations`` RLlib iterations; returns the run folder.

    ``config`` replaces :func:`ppo_config` (e.g. the same config with an instrumented env).
    A folder that already holds a run is refused (``RunFolderInUseError``, a ValueError)
    unless ``overwrite`` is True, which deletes that run's files first.

    ``ray.init()`` joins the cluster named by ``RAY_ADDRESS`` when it is set and starts a
    local one otherwise. The folder gets ``args.json``, ``metrics.jsonl`` (one line per
    iteration), ``checkpoint/`` (RLlib's, for ``Algorithm.from_checkpoint``) and
    ``agent.rllib`` (the learner's actor, for ``agents.load``).
    """
    args.check_eval_opponent()
    import ray

    from agents import make
    from mendikot_env.arena import duplicate_arena

    rules = args.resolved_rules()
    out = Path(args.out)
    prepare_run_folder(out, RLLIB_RUN_FILES, overwrite)
    (out / "args.json").write_text(json.dumps({**asdict(args), "rules_resolved": rules.to_dict()}, indent=2))
    if not ray.is_initialized():
        ray.init()
    algorithm = (config or ppo_config(args)).build_algo()
    opponent = make(args.eval_opponent, rules, seed=args.seed) if args.eval_deals else None
    try:
        with (out / "metrics.jsonl").open("a") as metrics:
            for iteration in range(1, args.iterations + 1):
                start = time.perf_counter()
                result = algorithm.train()
                row = _summary(result, time.perf_counter() - start, rules)
                if opponent is not None:
                    arena = duplicate_arena(
                        rules, learner_agent(algorithm, rules, args.activation), opponent, args.eval_deals, seed=0
                    )
                    row[f"eval/win_rate_vs_{args.eval_opponent}"] = arena.win_rate
                metrics.write(json.dumps(row) + "\n")
                metrics.flush()
                log(_progress_line(row, args.eval_opponent))
                if iteration % args.checkpoint_every == 0 or iteration == args.iterations:
                    algorithm.save_to_path(str((out / "checkpoint").resolve()))
        state = algorithm.learner_group.get_weights([LEARNER])[LEARNER]
        export_policy(state, out / f"agent{SUFFIX}", rules, args.activation)
    finally:
        algorithm.stop()
    return out


def _progress_line(row: dict[str, Any], opponent: str) -> str:
    text = (
        f"iter {row['iteration']:>4}  env steps/s {row['charts/env_steps_per_s']:8.1f}  "
        f"return {row['charts/learner_return']:+.3f}  win vs league {row['charts/learner_win_rate_vs_league']:.3f}  "
        f"snapshots {row['charts/snapshots_added']}"
    )
    key = f"eval/win_rate_vs_{opponent}"
    return text + (f"  win vs {opponent} {row[key]:.3f}" if key in row else "")
