"""The one generic API sweep, in the style of pgx's and PettingZoo's ``api_test``: every rules
preset at every player count, through the AEC env and through the batched core.

The AEC half runs PettingZoo's own ``api_test`` and then the conventions users' RL libraries
rely on; the core half plays random single and batched games and checks what holds for any
game. The detailed checks of each rule live in test_env.py and test_invariants.py; this file
only asks that every variant keeps the contracts.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import re
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test

import mendikot_env
from mendikot_env import core
from mendikot_env.observation import ObservationEncoder, observation_layout
from mendikot_env.rules import PLAYER_COUNTS, PRESETS, Rules

VARIANTS = {
    f"{preset}-{n}p": Rules.preset(preset, n_players=n) for preset, n in itertools.product(PRESETS, PLAYER_COUNTS)
}
NAMES = list(VARIANTS)
NUM_ACTIONS = 53


def variant_seed(name: str) -> int:
    return 1000 + NAMES.index(name)


# ============================================================================= AEC env


@pytest.mark.parametrize("name", NAMES)
def test_pettingzoo_api_test(name: str) -> None:
    env = mendikot_env.env(VARIANTS[name])
    for i, agent in enumerate(env.possible_agents):  # api_test samples from the spaces
        env.action_space(agent).seed(variant_seed(name) + i)
        env.observation_space(agent).seed(variant_seed(name) + 100 + i)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env, num_cycles=100)


def check_observation(env, agent: str, observation: dict) -> None:
    """The dict observation: float32 vector within its space, int8 0/1 mask of 53."""
    vector, mask = observation["observation"], observation["action_mask"]
    assert vector.dtype == np.float32 and vector.shape == env.observation_space(agent)["observation"].shape
    assert mask.dtype == np.int8 and mask.shape == (NUM_ACTIONS,) and set(np.unique(mask)) <= {0, 1}
    assert env.observation_space(agent).contains(observation), f"{agent}'s observation is outside its space"


def check_final_rewards(env, rules: Rules) -> None:
    """Teammates share the reward, the two teams' rewards are opposite, every one a float."""
    rewards = [env.rewards[agent] for agent in env.possible_agents]
    assert all(type(r) is float for r in rewards)
    assert all(r == rewards[seat % 2] and r == -rewards[1 - seat % 2] for seat, r in enumerate(rewards))
    assert rewards[0] in (-1.0, 0.0, 1.0) and (rewards[0] != 0.0 or rules.n_players > 4)


def play_checked(env, rules: Rules, seed: int) -> list[tuple]:
    """Play one seeded random hand, checking the AEC conventions at every turn; returns a log
    of (agent, observation bytes, action, rewards) to compare runs with."""
    env.reset(seed=seed)
    agents = env.possible_agents
    assert env.agents == agents
    assert env.infos == {agent: {} for agent in agents}, "infos are empty at reset"
    assert all(env.rewards[a] == 0.0 and not env.terminations[a] and not env.truncations[a] for a in agents)
    policy = np.random.default_rng(seed)
    final: dict[str, float] = {}
    log = []
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, info = env.last()
        check_observation(env, agent, observation)
        if terminated or truncated:
            assert agent in env.agents and reward == final[agent], "an agent stays until stepped with None"
            assert not observation["action_mask"].any() and "result" in info
            env.step(None)
            assert agent not in env.agents
            assert all(r == 0.0 for r in env.rewards.values()), "rewards hold only the last step's"
            log.append((agent, None, reward))
            continue
        assert env.agents == agents and info == {} and reward == 0.0
        mask = observation["action_mask"]
        assert mask.any(), "the agent to act has a legal action"
        for other in agents:
            assert other == agent or not env.observe(other)["action_mask"].any(), "only the agent to act has a mask"
        action = int(policy.choice(np.flatnonzero(mask)))
        env.step(action)
        if all(env.terminations.values()):
            check_final_rewards(env, rules)
            final = dict(env.rewards)
        else:
            assert all(r == 0.0 for r in env.rewards.values()), "no reward before the end of the hand"
        log.append((agent, observation["observation"].tobytes(), action, tuple(env.rewards.values())))
    assert env.agents == [] and final, "the hand ended and every agent left"
    return log


@pytest.mark.parametrize("name", NAMES)
def test_aec_conventions_and_seeding(name: str) -> None:
    rules, seed = VARIANTS[name], variant_seed(name)
    env = mendikot_env.env(rules)
    first = play_checked(env, rules, seed)
    assert play_checked(env, rules, seed) == first, "reset(seed) replays the same hand on the same env"
    assert play_checked(mendikot_env.env(rules), rules, seed) == first, "and on a fresh env"
    assert play_checked(env, rules, seed + 1) != first, "another seed deals another hand"


@pytest.mark.parametrize("name", NAMES)
def test_an_illegal_action_ends_the_episode_in_the_wrapper(name: str) -> None:
    env = mendikot_env.env(VARIANTS[name])
    env.reset(seed=variant_seed(name))
    offender = env.agent_selection
    illegal = int(np.flatnonzero(env.observe(offender)["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(illegal)  # no exception: TerminateIllegalWrapper ends the episode
    assert all(env.terminations.values())
    assert env.rewards[offender] == -1.0 and all(r == 0.0 for a, r in env.rewards.items() if a != offender)
    for agent in env.agent_iter():
        _, reward, terminated, _, _ = env.last()
        assert terminated and reward == (-1.0 if agent == offender else 0.0)
        env.step(None)
    assert env.agents == []


# ============================================================================= batched core

# "(B, n) uint64: ..." in the State's field comments: the documented shape and dtype.
FIELD_COMMENT = re.compile(r"^\s+(\w+): np\.ndarray\s+# \(([^)]*)\) (\w+):", re.MULTILINE)


def documented_fields() -> dict[str, tuple[tuple[str, ...], str]]:
    """Every array field of core.State with the shape and dtype its comment documents."""
    documented = {
        name: (tuple(s.strip() for s in shape.split(",") if s.strip()), dtype)
        for name, shape, dtype in FIELD_COMMENT.findall(inspect.getsource(core.State))
    }
    arrays = {f.name for f in dataclasses.fields(core.State) if f.name != "rules"}
    assert arrays == set(documented), f"fields without a '# (shape) dtype: meaning' comment: {arrays - set(documented)}"
    return documented


DOCUMENTED = documented_fields()


def check_fields(state: core.State) -> None:
    """Every state field has the dtype and shape its comment says."""
    sizes = {"B": state.batch_size, "n": state.rules.n_players, "n_tricks": state.rules.n_tricks}
    for name, (shape, dtype) in DOCUMENTED.items():
        value = getattr(state, name)
        known = set(sizes) | {s for s in shape if s.isdigit()}
        assert set(shape) <= known, f"{name}: the test knows the sizes {list(sizes)} and numbers, not {shape}"
        want = tuple(int(s) if s.isdigit() else sizes[s] for s in shape)
        assert value.dtype == np.dtype(dtype) and value.shape == want, f"{name}: {value.dtype} {value.shape}"


def check_live_state(state: core.State, encoder: ObservationEncoder) -> np.ndarray:
    """Masks, acting seats, card conservation, tricks so far and observations; returns the mask."""
    rules, live = state.rules, ~state.done
    mask = core.legal_action_mask(state)
    assert mask.dtype == bool and mask.shape == (state.batch_size, NUM_ACTIONS)
    assert mask[live].any(axis=1).all() and not mask[~live].any(), "masks are empty exactly at the end"
    assert ((state.current[live] >= 0) & (state.current[live] < rules.n_players)).all()
    assert (state.current[~live] == core.NO_SEAT).all()
    face_down = np.where(state.face_down >= 0, 1, 0)
    held = np.bitwise_count(state.hands | state.played).sum(axis=1) + face_down
    assert (held == rules.pack_size).all(), "every card is in a hand, played or face down"
    taken = np.bitwise_count(state.taken).sum(axis=1) + np.bitwise_count(state.middle)
    assert (taken == state.trick_no * rules.n_players).all(), "finished tricks' cards are taken (or in the middle)"
    observations = encoder.encode(state, state.current)
    assert observations.dtype == np.float32 and observations.shape == (state.batch_size, encoder.size)
    assert ((observations >= 0) & (observations <= 1)).all()
    return mask


def check_finished(state: core.State) -> None:
    """Tens add to four and tricks to the hand's tricks; the winner is a team or a draw."""
    rules = state.rules
    results = core.hand_results(state)
    assert (results.tens.sum(axis=1) == 4).all() and (results.tricks.sum(axis=1) == rules.n_tricks).all()
    assert np.isin(results.winner, (-1, 0, 1) if rules.n_players > 4 else (0, 1)).all()
    assert ((results.trick_winners >= 0) & (results.trick_winners < rules.n_players)).all()


def same_state(a: core.State, b: core.State) -> bool:
    return all(np.array_equal(getattr(a, name), getattr(b, name)) for name in DOCUMENTED)


@pytest.mark.parametrize("batch", [1, 16])
@pytest.mark.parametrize("name", NAMES)
def test_random_core_games(name: str, batch: int) -> None:
    rules = VARIANTS[name]
    rng = np.random.default_rng([variant_seed(name), batch])
    state = core.new_hands(rules, batch, rng)
    encoder = ObservationEncoder(rules)
    assert encoder.size == observation_layout(rules).size
    steps = 0
    while not state.done.all():
        check_fields(state)
        mask = check_live_state(state, encoder)
        actions = core.random_legal_actions(core.legal_bits(state), rng)
        live = ~state.done
        assert ((actions >= 0) == live).all() and mask[np.flatnonzero(live), actions[live]].all()
        finished = state.select(np.flatnonzero(~live))
        core.step(state, np.where(live, actions, 0))
        assert same_state(state.select(np.flatnonzero(~live)), finished), "a finished game steps as a no-op"
        steps += 1
        assert steps <= rules.pack_size + 2 * rules.n_tricks, "the hand ends"
    check_fields(state)
    check_live_state(state, encoder)
    check_finished(state)
    before = state.copy()
    core.step(state, np.zeros(batch, dtype=np.int64))
    assert same_state(state, before), "a finished batch steps as a no-op"
