"""A network agent's ``views=24``: its policy averaged over the 24 relabellings of the suits,
checked against the views computed one at a time, for symmetry, and through the agent specs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from test_suit_symmetry import relabelled_cards

import agents
from agents.network import Network
from agents.neural import NeuralAgent, with_advice
from agents.registry import SHIPPED_NETWORKS
from agents.suit_symmetry import RELABELLINGS, SuitSymmetry
from mendikot_env import Rules, core
from mendikot_env.arena import duplicate_arena
from mendikot_env.cards import NUM_ACTIONS
from mendikot_env.observation import ObservationEncoder


def decisions(rules: Rules, games: int = 16, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the seats to move along random play (every trick's stage)."""
    rng = np.random.default_rng(seed)
    state = core.new_hands(rules, games, rng=rng)
    encoder = ObservationEncoder(rules)
    seen, masks = [], []
    while not state.done.all():
        live = ~state.done
        seen.append(encoder.encode(state, state.current)[live])
        masks.append(core.legal_action_mask(state)[live])
        core.step(state, core.random_legal_actions(core.legal_bits(state), rng), active=live)
    return np.concatenate(seen), np.concatenate(masks)


def small_agent(rules: Rules, views: int, advisor: str = "none") -> NeuralAgent:
    torch.manual_seed(0)
    network = Network(rules, hidden=(32,), card_hidden=8, hidden_trump_feature=True, advisor=advisor).eval()
    return NeuralAgent(network, rules, views=views)


@pytest.mark.parametrize(("preset", "advisor"), [("standard", "none"), ("band", "none"), ("band", "hard")])
def test_the_averaged_policy_and_value_are_the_means_of_the_views_mapped_back_to_the_cards(
    preset: str, advisor: str
) -> None:
    rules = Rules.preset(preset)
    observations, masks = decisions(rules)
    agent = small_agent(rules, 24, advisor)
    seen = observations if agent.advisor is None else with_advice(agent.advisor, observations, masks)
    symmetry = SuitSymmetry(rules, agent.advisor is not None, torch.device("cpu"))
    obs, legal = torch.from_numpy(seen), torch.from_numpy(masks)
    expected, expected_value = np.zeros((len(obs), NUM_ACTIONS)), np.zeros(len(obs))
    for k, new_suit in enumerate(RELABELLINGS):  # one view at a time, mapped back with the test's own card map
        which = torch.full((len(obs),), k)
        with torch.no_grad():
            logits, values = agent.network(symmetry.observations(obs, which), symmetry.actions(legal, which))
        log_policy = torch.log_softmax(logits, dim=-1).numpy()
        expected += log_policy[:, relabelled_cards(new_suit, np.arange(NUM_ACTIONS))] / len(RELABELLINGS)
        expected_value += values.numpy() / len(RELABELLINGS)
    averaged, value = (x.numpy() for x in agent._outputs(observations, masks))
    assert np.allclose(averaged[masks], expected[masks], atol=1e-4)
    assert (averaged[~masks] <= -1e8).all()
    assert np.allclose(value, expected_value, atol=1e-5) and np.ptp(value) > 0
    policy = agent.probabilities(observations, masks)
    assert np.allclose(policy.sum(axis=1), 1.0, atol=1e-5) and (policy[~masks] == 0).all()
    empty = agent.act(observations[:0], masks[:0])
    assert empty.shape == (0,)


def test_a_decision_and_its_relabelled_twin_get_the_same_averaged_policy() -> None:
    rules = Rules.preset("band")
    observations, masks = decisions(rules, seed=5)
    symmetry = SuitSymmetry(rules, False, torch.device("cpu"))
    for views, same in ((24, True), (1, False)):  # a single view is not symmetric: the test can fail
        agent = small_agent(rules, views)
        policy = agent.probabilities(observations, masks)
        for k in (5, 17, 23):
            which = torch.full((len(masks),), k)
            twin_obs = symmetry.observations(torch.from_numpy(observations), which).numpy()
            twin_masks = symmetry.actions(torch.from_numpy(masks), which).numpy()
            twin_policy = agent.probabilities(twin_obs, twin_masks)
            mapped = twin_policy[:, relabelled_cards(RELABELLINGS[k], np.arange(NUM_ACTIONS))]
            assert np.allclose(mapped, policy, atol=1e-5) == same


def test_one_view_is_the_network_itself() -> None:
    rules = Rules()
    observations, masks = decisions(rules)
    agent = small_agent(rules, 1)
    with torch.no_grad():
        logits, _ = agent.network(torch.from_numpy(observations), torch.from_numpy(masks))
    assert torch.equal(agent._logits(observations, masks), logits)
    assert agent.symmetry is None


def test_specs_ask_for_the_views_of_a_network_and_refuse_them_elsewhere() -> None:
    agent = agents.make("apprentice:views=24", "band")
    assert (agent.name, agent.views) == ("apprentice:views=24", 24)
    assert agents.load("Apprentice:views=1").views == 1
    ensemble = agents.load("apprentice:views=24+trained")
    assert [member.views for member in ensemble.members] == [24, 1]
    search = agents.load("search:k=4,base=apprentice:views=24,z=2")
    assert (search.base.name, search.base.views) == ("apprentice:views=24", 24)
    with pytest.raises(ValueError, match=r"views='3' must be 1 \(the network alone\) or 24"):
        agents.load("apprentice:views=3")
    with pytest.raises(ValueError, match="'hard' is not one"):
        agents.make("hard:views=24")
    with pytest.raises(ValueError, match=r"search spec .*base='medium:views=24'"):
        agents.load("search:k=4,base=medium:views=24")
    with pytest.raises(ValueError, match="NeuralAgent views 2 is not allowed"):
        small_agent(Rules(), 2)


def test_a_file_whose_name_holds_views_loads_as_a_file_and_a_leaf_averages_its_values(tmp_path: Path) -> None:
    odd = tmp_path / "net:views=24.pt"  # an existing path is never split
    shutil.copy(SHIPPED_NETWORKS["apprentice"]["standard"], odd)
    assert agents.load(str(odd)).views == 1
    assert agents.load(f"{odd}:views=24").name == "net:views=24:views=24"
    search = agents.load(f"search:k=4,leaf={odd}:views=24")
    state = core.new_hands(Rules(), 3, rng=np.random.default_rng(0))
    plain = agents.load(str(odd))
    averaged = search.leaf(state)
    assert averaged.shape == (3,) and not np.allclose(averaged, plain.state_values(state))


@pytest.mark.parametrize("preset", ["standard", "band"])
def test_the_shipped_apprentice_plays_legal_hands_with_its_suit_views(preset: str) -> None:
    result = duplicate_arena(preset, agents.make("apprentice:views=24", preset), agents.make("hard", preset), 8, seed=1)
    assert result.hands == 16 and result.a == "apprentice:views=24"
