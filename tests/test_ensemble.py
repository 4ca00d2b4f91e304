"""The ensemble agent: the mean of its members' policies, legal moves only, loaded by ``a+b``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import agents
from agents import EnsembleAgent
from agents.neural import NeuralAgent
from mendikot_env import Rules
from mendikot_env.arena import duplicate_arena
from mendikot_env.training.loop import Args, Network, build_network, export_agent, playing_spec


def network_agent(rules: Rules, seed: int, name: str) -> NeuralAgent:
    torch.manual_seed(seed)
    return NeuralAgent(Network(rules, (16,), 8).eval(), rules, name=name)


def random_masks(rows: int, rng: np.random.Generator) -> np.ndarray:
    masks = rng.random((rows, 53)) < 0.2
    masks[np.arange(rows), rng.integers(0, 53, rows)] = True  # at least one legal action a row
    return masks


def test_the_ensemble_plays_the_most_likely_move_of_the_mean_policy() -> None:
    rules = Rules()
    first, second = network_agent(rules, 1, "a"), network_agent(rules, 2, "b")
    rng = np.random.default_rng(0)
    obs = rng.random((500, first.network.obs_size), dtype=np.float32)
    masks = random_masks(500, rng)
    ensemble = EnsembleAgent([first, second])
    mean = (first.probabilities(obs, masks) + second.probabilities(obs, masks)) / 2
    np.testing.assert_allclose(ensemble.probabilities(obs, masks), mean, rtol=1e-6)
    np.testing.assert_allclose(mean.sum(axis=1), 1.0, rtol=1e-5)
    assert (mean[~masks] == 0).all()
    actions = ensemble.act(obs, masks)
    assert np.array_equal(actions, mean.argmax(axis=1))
    assert masks[np.arange(500), actions].all()
    # Two members that disagree: the ensemble follows neither of them everywhere.
    assert (actions != first.act(obs, masks)).any() and (actions != second.act(obs, masks)).any()
    assert ensemble.name == "a+b"


def test_an_ensemble_of_one_network_twice_plays_exactly_as_the_network() -> None:
    rules = Rules.preset("band")
    member = network_agent(rules, 3, "a")
    rng = np.random.default_rng(1)
    obs = rng.random((300, member.network.obs_size), dtype=np.float32)
    masks = random_masks(300, rng)
    assert np.array_equal(EnsembleAgent([member, member]).act(obs, masks), member.act(obs, masks))


def exported(tmp_path: Path, rules: Rules, seed: int, name: str) -> Path:
    torch.manual_seed(seed)
    args = Args(rules="band" if rules.trump == "band" else "standard", hidden=(16,), card_hidden=8)
    network = build_network(rules, playing_spec(rules, args))
    return export_agent(network, rules, args, tmp_path / f"{name}.pt")


def test_load_joins_trained_networks_with_a_plus_and_the_ensemble_plays_legally(tmp_path: Path) -> None:
    rules = Rules.preset("band")
    first, second = exported(tmp_path, rules, 1, "a"), exported(tmp_path, rules, 2, "b")
    ensemble = agents.load(f"{first}+{second}", rules)
    assert isinstance(ensemble, EnsembleAgent)
    assert [type(m) for m in ensemble.members] == [NeuralAgent, NeuralAgent]
    # The arena raises AgentError on any illegal action: 100 deal pairs are 200 hands.
    result = duplicate_arena(rules, ensemble, agents.make("random", rules, seed=1), deals=100, seed=3)
    assert result.hands == 200


def test_bad_ensembles_are_refused_by_name(tmp_path: Path) -> None:
    band = exported(tmp_path, Rules.preset("band"), 1, "band")
    standard = exported(tmp_path, Rules(), 2, "standard")
    with pytest.raises(ValueError, match="member 'hard' has no policy to average"):
        agents.load(f"hard+{band}", Rules.preset("band"))
    with pytest.raises(ValueError, match="empty member"):
        agents.load(f"{band}+", Rules.preset("band"))
    with pytest.raises(ValueError, match="does not exist"):
        agents.load(f"{band}+{tmp_path / 'missing.pt'}", Rules.preset("band"))
    with pytest.raises(ValueError, match="must play hands by one set of rules, but they were trained for band: "):
        agents.load(f"{band}+{standard}")
    with pytest.raises(ValueError, match="at least two members, got 1"):
        EnsembleAgent([agents.load(str(band))])


def test_a_single_path_with_a_plus_in_it_is_one_agent_and_members_are_named(tmp_path: Path) -> None:
    rules = Rules.preset("band")
    plus = exported(tmp_path, rules, 1, "x+y")
    other = exported(tmp_path, rules, 2, "z")
    agent = agents.load(str(plus), rules)
    assert isinstance(agent, NeuralAgent) and agent.name == "x+y"
    with pytest.raises(ValueError, match=r"'.*/x' \(a member of the ensemble spec '.*x\+y\.pt\+.*z\.pt'\) does not"):
        agents.load(f"{plus}+{other}", rules)
    # Members are named after their files (a run's agent.pt after its folder); the rules are
    # the members' own when none are given.
    ensemble = agents.load(f"{other}+{other}")
    assert isinstance(ensemble, EnsembleAgent) and ensemble.name == "z+z" and ensemble.rules == rules
    assert agents.make("trained").name == "trained"


def test_three_members_average_in_any_order() -> None:
    rules = Rules()
    members = [network_agent(rules, seed, name) for seed, name in ((4, "a"), (5, "b"), (6, "c"))]
    rng = np.random.default_rng(2)
    obs = rng.random((400, members[0].network.obs_size), dtype=np.float32)
    masks = random_masks(400, rng)
    forward, backward = EnsembleAgent(members), EnsembleAgent(members[::-1])
    mean = sum(m.probabilities(obs, masks) for m in members) / 3
    np.testing.assert_allclose(forward.probabilities(obs, masks), mean, rtol=1e-5)
    np.testing.assert_allclose(backward.probabilities(obs, masks), mean, rtol=1e-5)
    assert np.array_equal(forward.act(obs, masks), mean.argmax(axis=1))
