"""The RLlib integration: env keys, masked module, league mapping, one tiny training run.

Ray starts once for the module (a few seconds); the training run samples in the driver
(``env_runners=0``) so the instrumented env below sees every action RLlib sends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import ray
import torch
from ray.rllib.core.columns import Columns

import agents
import mendikot_env
from mendikot_env.arena import duplicate_arena
from mendikot_env.cli import build_parser
from mendikot_env.integrations.policy_file import MLPPolicyAgent, PolicyFileError, load_policy_file
from mendikot_env.integrations.rllib import (
    LEARNER,
    MendikotRLlibEnv,
    module_spec,
    ppo_config,
    register,
    seat_to_module,
    train,
)
from mendikot_env.integrations.rllib_args import Args
from mendikot_env.observation import ObservationEncoder
from mendikot_env.rules import PRESETS, Rules
from mendikot_env.run_folder import RunFolderInUseError

RULES = "band"


@pytest.fixture(scope="module")
def ray_session() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def play_hand(env: MendikotRLlibEnv, seed: int, choose: Any) -> tuple[int, dict[str, float], dict]:
    """One hand through RLlib's env API; returns steps, final rewards and final observations."""
    obs, _ = env.reset(seed=seed)
    for step in range(1, 500):
        ((agent, agent_obs),) = obs.items()
        obs, rewards, terminateds, _, _ = env.step({agent: choose(agent_obs)})
        if terminateds["__all__"]:
            return step, rewards, obs
    raise AssertionError("the hand did not end")


# ------------------------------------------------------------------------------ the env


@pytest.mark.parametrize("preset", list(PRESETS))
def test_env_keys_observations_for_the_action_masking_module(preset: str) -> None:
    env = MendikotRLlibEnv({"rules": preset})
    rules = Rules.preset(preset)
    space = env.observation_spaces["player_0"]
    assert set(space.spaces) == {"observations", "action_mask"}
    assert space["observations"].shape == (ObservationEncoder(rules).size,)
    assert space["action_mask"].dtype == np.float32
    rng = np.random.default_rng(0)

    def choose(agent_obs: dict) -> int:
        assert space.contains(agent_obs)
        return int(rng.choice(np.flatnonzero(agent_obs["action_mask"])))

    _, rewards, final = play_hand(env, seed=1, choose=choose)
    assert set(rewards) == set(final) == {f"player_{i}" for i in range(4)}
    assert {rewards["player_0"], rewards["player_1"]} == {1.0, -1.0}
    assert all(o["action_mask"].sum() == 0 for o in final.values())  # nothing to do at the end


def test_env_options_and_registration() -> None:
    env = MendikotRLlibEnv({"rules": {"trump": "open", "n_players": 6}, "reward": "points", "render_mode": "ansi"})
    assert len(env.possible_agents) == 6
    env.reset(seed=0)
    assert isinstance(env.render(), str)
    assert register() == "mendikot"


@pytest.mark.parametrize(
    ("change", "message"),
    [({"activation": "gelu"}, "activation"), ({"iterations": 0}, "iterations"), ({"rules": "nope"}, "preset")],
)
def test_args_are_checked_before_ray_starts(change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Args(**change)


# --------------------------------------------------------------------------- the module


def test_masked_module_samples_only_legal_actions() -> None:
    rules = Rules.preset(RULES)
    env = MendikotRLlibEnv({"rules": RULES})
    spec = module_spec((32,))
    spec.observation_space = env.observation_spaces["player_0"]
    spec.action_space = env.action_spaces["player_0"]
    module = spec.build()
    rng = np.random.default_rng(0)
    masks = (rng.random((256, 53)) < 0.1).astype(np.float32)
    masks[np.arange(256), rng.integers(0, 53, 256)] = 1.0
    masks[0] = 0.0  # a terminal observation: no legal action, logits must stay finite
    obs = rng.random((256, ObservationEncoder(rules).size)).astype(np.float32)
    batch = {Columns.OBS: {"observations": torch.from_numpy(obs), "action_mask": torch.from_numpy(masks)}}
    logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
    assert torch.isfinite(logits).all()
    actions = torch.distributions.Categorical(logits=logits[1:]).sample((20,))
    assert (torch.from_numpy(masks[1:]).gather(1, actions.T) == 1).all()
    assert module.compute_values(batch).shape == (256,)


def test_seats_map_to_one_learner_team_and_one_snapshot() -> None:
    teams, slots = set(), set()
    for k in range(64):
        episode = type("Episode", (), {"id_": f"episode-{k}"})()
        modules = [seat_to_module(f"player_{s}", episode, league_size=3) for s in range(4)]
        learner_seats = [s for s, m in enumerate(modules) if m == LEARNER]
        assert len(learner_seats) == 2 and learner_seats[0] % 2 == learner_seats[1] % 2
        opponents = {m for m in modules if m != LEARNER}
        assert len(opponents) == 1
        teams.add(learner_seats[0] % 2)
        slots |= opponents
    assert teams == {0, 1} and slots == {"snapshot_0", "snapshot_1", "snapshot_2"}


# ----------------------------------------------------------------------- policy files


def test_policy_file_round_trip_and_errors(tmp_path: Path) -> None:
    from mendikot_env.integrations.policy_file import save_policy_file

    rules = Rules.preset(RULES)
    rng = np.random.default_rng(0)
    size = ObservationEncoder(rules).size
    layers = [(rng.normal(size=(size, 8)), np.zeros(8)), (rng.normal(size=(8, 53)), np.zeros(53))]
    path = save_policy_file(tmp_path / "run" / "agent.rllib", layers, rules)
    agent = agents.load(str(path), rules, seed=0)
    assert isinstance(agent, MLPPolicyAgent) and agent.name == "run"
    by_folder = agents.load(str(tmp_path / "run"), rules, seed=0)  # a train-rllib run folder: its agent.rllib
    assert isinstance(by_folder, MLPPolicyAgent) and by_folder.name == "run"
    with pytest.raises(PolicyFileError, match="trained for hands played otherwise .trump: 'band' vs 'cut'"):
        load_policy_file(path, Rules.preset("standard"))
    # Rules that play hands the same way (match tariff, display) are accepted.
    same_hands = rules.replace(rotation="rotate", scoring="tiered", target=9, direction="anticlockwise")
    assert load_policy_file(path, same_hands).rules == same_hands
    (tmp_path / "bad.rllib").write_bytes(b"not a policy")
    with pytest.raises(PolicyFileError, match="not a readable policy file"):
        load_policy_file(tmp_path / "bad.rllib")
    data = path.read_bytes()
    (tmp_path / "truncated.rllib").write_bytes(data[: len(data) // 2])
    with pytest.raises(PolicyFileError, match="not an intact .npz archive"):
        load_policy_file(tmp_path / "truncated.rllib")
    flipped = bytearray(data)
    flipped[data.index(b"\x93NUMPY") + 200] ^= 0xFF  # inside the first array's data
    (tmp_path / "flipped.rllib").write_bytes(bytes(flipped))
    with pytest.raises(PolicyFileError, match="not an intact .npz archive.*CRC"):
        load_policy_file(tmp_path / "flipped.rllib")
    np.savez(tmp_path / "pickled.npz", meta=np.array([{"format": "x"}], dtype=object))
    (tmp_path / "pickled.npz").rename(tmp_path / "pickled.rllib")
    with pytest.raises(PolicyFileError, match="pickled objects") as caught:
        load_policy_file(tmp_path / "pickled.rllib")
    assert "allow_pickle" not in str(caught.value)
    with pytest.raises(ValueError, match="must end in"):
        save_policy_file(tmp_path / "agent.npz", layers, rules)


def malformed_policy(tmp_path: Path, how: str) -> Path:
    """A policy file for the standard rules, spoilt as a hand edit or another tool might."""
    rules = Rules()
    size = ObservationEncoder(rules).size
    meta: Any = {"format": "mendikot-policy-mlp", "version": 1, "rules": rules.to_dict(), "activation": "tanh"}
    meta["n_layers"] = 2
    arrays = {"w0": np.zeros((size, 8)), "b0": np.zeros(8), "w1": np.zeros((8, 53)), "b1": np.zeros(53)}
    if how.startswith("no "):
        del meta[how.removeprefix("no ")]
    elif how == "meta a list":
        meta = [meta]
    elif how == "zero layers":
        meta["n_layers"] = 0
    elif how == "layers that do not chain":
        arrays["w1"] = np.zeros((9, 53))
    elif how == "a bias of the wrong size":
        arrays["b0"] = np.zeros(7)
    elif how == "text weights":
        arrays["w0"] = np.array(["a"])
    elif how == "an infinite weight":
        arrays["w1"][3, 4] = np.inf
    elif how == "rules not an object":
        meta["rules"] = "standard"
    elif how == "unknown activation":
        meta["activation"] = "gelu"
    path = tmp_path / "run" / "agent.rllib"
    path.parent.mkdir()
    with path.open("wb") as handle:
        np.savez(handle, meta=np.array(json.dumps(meta)), **arrays)
    return path


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("no rules", r"lacks \['rules'\] in its meta; it was not written by save_policy_file"),
        ("no activation", r"lacks \['activation'\] in its meta"),
        ("no n_layers", r"lacks \['n_layers'\] in its meta"),
        ("meta a list", "is not a mendikot-policy-mlp file .its meta is a JSON list, not an object"),
        ("zero layers", "has n_layers 0; a policy has a whole number of layers, at least 1"),
        (
            "layers that do not chain",
            r"layer 1 has weight \(9, 53\) and bias \(53,\); it needs weight \(8, 53\) and bias \(53,\)",
        ),
        ("a bias of the wrong size", r"layer 0 has weight \(864, 8\) and bias \(7,\); it needs .* bias \(8,\)"),
        ("text weights", "layer 0 holds <U1 weights and float64 biases; both must be numbers"),
        ("an infinite weight", r"layer 1 holds NaN or infinite weights \(a diverged network\); it cannot play"),
        ("rules not an object", "has rules 'standard'; they must be a JSON object of Rules fields"),
        ("unknown activation", r"unknown activation 'gelu'; known: \['tanh', 'relu'\]"),
    ],
)
def test_a_malformed_policy_file_is_refused_when_loaded_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str, message: str
) -> None:
    """Not a KeyError, an IndexError or a numpy shape error at the first act: a PolicyFileError
    (a ValueError, so the commands print one line) naming the file and what is wrong."""
    from mendikot_env.cli import main

    path = malformed_policy(tmp_path, how)
    with pytest.raises(PolicyFileError, match=message) as caught:
        load_policy_file(path, Rules())
    assert str(caught.value).startswith(str(path))
    with pytest.raises(PolicyFileError, match=message):
        agents.load(str(path))
    assert main(["arena", "--a", str(path), "--b", "random", "--deals", "2", "--no-progress"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("mendikot arena: error: ") and str(path) in error and error.count("\n") == 1


# ------------------------------------------------------------------------ training run


class RefereedEnv(MendikotRLlibEnv):
    """Records every action RLlib sends that the acting agent's mask does not allow."""

    illegal: list[tuple[str, int]] = []
    actions = 0
    final_rewards: list[dict[str, float]] = []

    def step(self, action: dict[str, int]) -> Any:
        agent = self.env.agent_selection
        chosen = int(action[agent])
        if not self.env.observe(agent)["action_mask"][chosen]:
            RefereedEnv.illegal.append((agent, chosen))
        RefereedEnv.actions += 1
        result = super().step(action)
        if result[2]["__all__"]:
            RefereedEnv.final_rewards.append(result[1])
        return result

    @classmethod
    def clear(cls) -> None:
        cls.illegal, cls.actions, cls.final_rewards = [], 0, []


def test_one_training_iteration_exports_an_agent_that_plays(ray_session: None, tmp_path: Path) -> None:
    args = Args(
        rules=RULES,
        out=str(tmp_path / "run"),
        iterations=1,
        env_runners=0,
        envs_per_runner=1,  # 256 steps in one env: four full hands
        train_batch_size=256,
        minibatch_size=128,
        epochs=1,
        hidden=(32,),
        league_size=2,
        win_rate_threshold=-1.0,  # any result beats the league: a snapshot is added
        min_episodes=1,
        eval_deals=4,
    )
    config = ppo_config(args).environment(
        RefereedEnv, env_config={"rules": RULES}, disable_env_checking=True
    )  # RLlib's pre-flight check would step one unmasked random action on purpose
    RefereedEnv.clear()
    out = train(args, log=lambda line: None, config=config)

    assert not RefereedEnv.illegal
    assert RefereedEnv.actions >= args.train_batch_size
    assert RefereedEnv.final_rewards
    for rewards in RefereedEnv.final_rewards:
        assert sorted(rewards.values()) == [-1.0, -1.0, 1.0, 1.0]

    row = json.loads((out / "metrics.jsonl").read_text().splitlines()[-1])
    assert row["iteration"] == 1 and row["charts/env_steps"] >= args.train_batch_size
    assert row["charts/env_steps_per_s"] > 0 and row["charts/snapshots_added"] == 1
    assert 0.0 <= row["eval/win_rate_vs_medium"] <= 1.0
    # A second run into the same folder is refused before it starts, and the run is intact.
    with pytest.raises(RunFolderInUseError, match="already holds a run .args.json, metrics.jsonl, checkpoint"):
        train(args, log=lambda line: None, config=config)
    assert len((out / "metrics.jsonl").read_text().splitlines()) == 1

    # The export loads as an agent and finishes hands in the arena and in the AEC env.
    rules = Rules.preset(RULES)
    agent = agents.load(str(out / "agent.rllib"), rules, seed=0)
    result = duplicate_arena(rules, agent, agents.make("random", rules, seed=1), deals=4, seed=0)
    assert result.hands == 8
    env = mendikot_env.env(RULES)
    env.reset(seed=0)
    for _agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        done = termination or truncation
        env.step(None if done else int(agent.act(obs["observation"][None], obs["action_mask"][None])[0]))
    assert env.unwrapped.result["winner"] in (0, 1)

    # The RLlib checkpoint restores, with the snapshot holding the learner's weights.
    from ray.rllib.algorithms.algorithm import Algorithm

    restored = Algorithm.from_checkpoint(str((out / "checkpoint").resolve()))
    try:
        modules = (LEARNER, "snapshot_0", "snapshot_1")
        weights = restored.learner_group.get_weights(modules)
        assert restored.iteration == 1
        learner, snapshot, initial = ({k: np.asarray(v) for k, v in weights[m].items()} for m in modules)
        assert all(np.array_equal(snapshot[k], learner[k]) for k in learner)  # slot 0: the trained learner
        assert any(not np.array_equal(initial[k], learner[k]) for k in learner)  # slot 1: still the initial one
    finally:
        restored.stop()


def test_train_rllib_command_line() -> None:
    args = build_parser().parse_args(
        ["train-rllib", "--rules", "band", "--n-players", "6", "--env-runners", "2", "--iterations", "3"]
    )
    assert args.command == "train-rllib" and args.env_runners == 2 and args.iterations == 3
    assert args.rules == "band" and args.n_players == 6 and args.hidden is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--eval-opponent", "bogus"], "--eval-opponent: unknown agent 'bogus'"),
        (["--train-batch-size", "100", "--minibatch-size", "200"], "--minibatch-size 200 must be at most"),
        (["--minibatch-size", "0"], r"--minibatch-size \(Args.minibatch_size\) must be an integer 1 or more"),
        (["--epochs", "0"], r"--epochs \(Args.epochs\) must be an integer 1 or more, got 0"),
        (["--eval-deals", "-1"], "--eval-deals .* 0 or more, got -1"),
    ],
)
def test_train_rllib_refuses_bad_options_before_ray_starts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path, options: list, message: str
) -> None:
    import mendikot_env.integrations.rllib as rllib
    from mendikot_env.cli import main

    def no_ray(args: Args) -> Path:
        raise AssertionError("train (and Ray) started with bad options")

    monkeypatch.setattr(rllib, "train", no_ray)
    assert main(["train-rllib", "--out", str(tmp_path / "run"), *options]) == 2
    error = capsys.readouterr().err
    assert error.startswith("mendikot train-rllib: error: ") and error.count("\n") == 1
    assert re.search(message, error), error


def test_rllib_args_check_their_ranges_in_python_too() -> None:
    """integrations.rllib.train(Args(...)) from Python gets the command's checks."""
    with pytest.raises(ValueError, match=r"--gamma \(Args.gamma\) must be in \[0, 1\], got 3"):
        Args(gamma=3)
    with pytest.raises(ValueError, match="--minibatch-size 200 must be at most --train-batch-size 100"):
        Args(train_batch_size=100, minibatch_size=200)
    with pytest.raises(ValueError, match="--eval-opponent: unknown agent 'bogus'"):
        Args(eval_opponent="bogus").check_eval_opponent()
    Args(eval_opponent="bogus", eval_deals=0).check_eval_opponent()  # no evaluation, no opponent needed
