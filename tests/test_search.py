"""The search agent: its spec, legal play in whole games, and choices that never see hidden cards."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.search import SearchAgent, SearchSpec, parse_search_spec
from mendikot_env import core
from mendikot_env.arena import duplicate_arena
from mendikot_env.belief import InfoState, sample_worlds
from mendikot_env.observation import ObservationEncoder
from mendikot_env.rules import Rules


def test_make_and_load_build_it_from_a_spec() -> None:
    agent = agents.make("search", Rules())
    assert isinstance(agent, SearchAgent) and agent.spec == SearchSpec()
    agent = agents.load("search:k=8, rollout=medium, budget_ms=5000", Rules.preset("band"), seed=1)
    assert agent.spec == SearchSpec(k=8, rollout="medium", budget_ms=5000.0)
    assert agent.rollout.name == "medium" and agent.name == "search:k=8, rollout=medium, budget_ms=5000"
    assert parse_search_spec("search:k=4,rollout=random").rollout == "random"


@pytest.mark.parametrize(
    "spec,named",
    [
        ("search:k=0", "k='0'"),
        ("search:k=two", "k='two'"),
        ("search:depth=3", "'depth=3'"),
        ("search:k", "'k'"),
        ("search:rollout=nobody", "rollout='nobody'"),
        ("search:budget_ms=-5", "budget_ms='-5'"),
    ],
)
def test_a_malformed_spec_is_a_clear_error_naming_the_value(spec: str, named: str) -> None:
    with pytest.raises(ValueError, match=named.replace("(", r"\(")):
        agents.make(spec, Rules())


def test_a_budget_that_cannot_hold_one_rollout_is_refused() -> None:
    with pytest.raises(ValueError, match="budget_ms=0.001 cannot hold one rollout"):
        agents.make("search:budget_ms=0.001", Rules())


@pytest.mark.parametrize("preset", ["standard", "band"])
def test_it_plays_legal_whole_hands_in_the_arena(preset: str) -> None:
    rules = Rules.preset(preset)
    result = duplicate_arena(
        rules, agents.make("search:k=4", rules, seed=0), agents.make("hard", rules), deals=2, seed=3
    )
    assert 0.0 <= result.win_rate <= 1.0


def test_an_observation_of_other_rules_is_refused() -> None:
    band = Rules.preset("band")
    state = core.new_hands(band, 1, rng=0)
    core.step(state, core.random_legal_actions(core.legal_bits(state), 0))  # the band card is down
    obs = ObservationEncoder(band).encode(state, state.current)
    with pytest.raises(ValueError, match="not an observation of"):
        agents.make("search:k=2", Rules()).act(obs, core.legal_action_mask(state))


@pytest.mark.parametrize("preset", ["standard", "band"])
def test_choices_do_not_change_when_the_hidden_cards_do(preset: str) -> None:
    """Another true deal the seat cannot tell apart (other hands, another face-down card)
    gives the same observation, and the seeded agent plays the same moves."""
    rules = Rules.preset(preset)
    encoder = ObservationEncoder(rules)
    agent = agents.make("search:k=6", rules, seed=0)
    rng = np.random.default_rng(4)
    state = core.new_hands(rules, 1, rng=8)
    checked = 0
    while not state.done.all():
        seat = int(state.current[0])
        obs, mask = encoder.encode(state, state.current), core.legal_action_mask(state)
        if mask.sum() > 1 and state.phase[0] == core.PLAY:
            other = sample_worlds(InfoState(rules, obs[0], mask[0]), 1, rng=checked, seat=seat)
            other_obs = encoder.encode(other, other.current)
            np.testing.assert_array_equal(other_obs, obs)
            hidden_differ = (other.hands != state.hands).any() or other.face_down[0] != state.face_down[0]
            agent.seed(checked)
            mine = agent.act(obs, mask)
            agent.seed(checked)
            assert (agent.act(other_obs, core.legal_action_mask(other)) == mine).all()
            checked += bool(hidden_differ)
        core.step(state, core.random_legal_actions(core.legal_bits(state), rng))
    assert checked >= 5


def test_asking_is_searched_through_the_sampled_deals() -> None:
    """Where asking is legal the agent weighs it with the other moves, and plays a legal move."""
    rules = Rules.preset("band")
    encoder = ObservationEncoder(rules)
    agent = agents.make("search:k=8", rules, seed=0)
    rng = np.random.default_rng(0)
    seen = 0
    for game in range(30):
        state = core.new_hands(rules, 1, rng=game)
        while not state.done.all() and seen < 3:
            mask = core.legal_action_mask(state)
            if mask[0, 52]:
                action = agent.act(encoder.encode(state, state.current), mask)
                assert mask[0, action[0]]
                seen += 1
            core.step(state, core.random_legal_actions(core.legal_bits(state) & ~core.ASK_BIT, rng))
        if seen >= 3:
            break
    assert seen >= 3


def test_it_plays_a_hand_in_the_aec_env_from_observations_alone() -> None:
    from mendikot_env import env as make_env

    game = make_env(rules="band")
    game.reset(seed=0)
    agent = agents.make("search:k=2", Rules.preset("band"), seed=0)
    steps = 0
    for _ in game.agent_iter():
        obs, _, terminated, truncated, _ = game.last()
        if terminated or truncated:
            game.step(None)
            continue
        game.step(int(agent.act(obs["observation"][None], obs["action_mask"][None])[0]))
        steps += 1
    assert steps >= 52
