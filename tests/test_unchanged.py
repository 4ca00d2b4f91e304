"""Refactors that must not change behaviour, proved to the bit: sha256 digests of the
observations, the bots' and the search's decisions and the belief's numbers over seeded
games, recorded from the code before the refactor (issue 44's information state).

A digest that changes means behaviour changed: find out why before recording a new one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import numpy as np
import pytest

import agents
from mendikot_env import core
from mendikot_env.belief import Belief, InfoState, sample_worlds
from mendikot_env.observation import ObservationEncoder, reads_history
from mendikot_env.rules import PRESETS, Rules

RULES = {name: Rules.preset(name) for name in PRESETS} | {
    f"{name}_{n}": Rules.preset(name, n_players=n) for name in ("standard", "band") for n in (6, 8)
}


def digest(parts: Iterator[object]) -> str:
    """sha256 of the exact bytes of every part in order (arrays by dtype, shape and data)."""
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, core.State):
            for name in core._ARRAY_FIELDS:
                h.update(name.encode())
                h.update(np.ascontiguousarray(getattr(part, name)).tobytes())
            continue
        array = np.asarray(part)
        h.update(f"{array.dtype}{array.shape}".encode())
        h.update(np.ascontiguousarray(array).tobytes())
    return h.hexdigest()


def random_states(rules: Rules, games: int, seed: int) -> Iterator[core.State]:
    """Every state (before each step) of ``games`` random hands, the last one over."""
    state = core.new_hands(rules, games, rng=seed)
    rng = np.random.default_rng(seed)
    while True:
        yield state
        if state.done.all():
            return
        core.step(state, core.random_legal_actions(core.legal_bits(state), rng))


def observation_parts(rules: Rules, seed: int) -> Iterator[object]:
    n = rules.n_players
    plain, history = ObservationEncoder(rules), ObservationEncoder(rules, history=True)
    score = np.array([[3.0, 7.0], [1.0, 0.0], [12.0, 2.0]])
    for state in random_states(rules, 3, seed):
        for seat in range(n):
            seats = np.full(3, seat)
            for encoder in (plain, history):
                yield encoder.encode(state, seats)
                yield encoder.encode(state, seats, match_score=score)
                yield encoder.encode(state, (seats + np.arange(3)) % n)
                for g in range(3):
                    one = state.select([g])
                    yield encoder.encode_one(one, seat)
                    yield encoder.encode_one(one, seat, match_score=score[g : g + 1])
                    yield encoder.encode(one, np.array([seat]))
        yield plain.encode(state, state.current)


def bot_parts(rules: Rules, level: str, seed: int) -> Iterator[object]:
    by_obs = agents.make(level, rules, seed=seed)
    by_state = agents.make(level, rules, seed=seed)
    pure = agents.make(level, rules)
    encoder = ObservationEncoder(rules)
    for state in random_states(rules, 6, seed):
        live = np.flatnonzero(~state.done)
        if live.size == 0:
            return
        play = state.select(live)
        bits = core.legal_bits(play)
        obs = encoder.encode(play, play.current, legal=bits)
        masks = core.legal_action_mask(play)
        yield by_obs.act(obs, masks)
        yield pure.act(obs, masks)
        yield by_state.act_state(play, bits)
        yield pure.act_state(play, bits, np.zeros(live.size, np.int64))


def search_parts(rules: Rules, spec: str, seed: int, games: int, steps: int | None = None) -> Iterator[object]:
    agent = agents.load(spec, rules, seed=seed)
    encoder = ObservationEncoder(rules, history=reads_history(agent))
    state = core.new_hands(rules, games, rng=seed)
    taken = 0
    while not state.done.all() and (steps is None or taken < steps):
        obs = encoder.encode(state, state.current)
        masks = core.legal_action_mask(state)
        live = np.flatnonzero(~state.done)
        actions = np.zeros(games, np.int64)
        actions[live] = agent.act(obs[live], masks[live])
        yield actions
        core.step(state, actions)
        taken += 1


def belief_positions(rules: Rules, seed: int) -> Iterator[tuple[int, np.ndarray, np.ndarray | None]]:
    """(seat, observation with history, mask or None) at some steps of random hands."""
    encoder = ObservationEncoder(rules, history=True)
    for i, state in enumerate(random_states(rules, 2, seed)):
        if i % 10 != 3 or state.done.any():
            continue
        masks = core.legal_action_mask(state)
        for g in range(2):
            for seat in range(rules.n_players):
                obs = encoder.encode(state.select([g]), np.array([seat]))[0]
                yield seat, obs, masks[g] if seat == state.current[g] else None


def belief_parts(rules: Rules, seed: int) -> Iterator[object]:
    bot, randomly = agents.make("hard", rules), agents.make("random", rules, seed=seed)
    size = ObservationEncoder(rules).size
    for i, (seat, obs, mask) in enumerate(belief_positions(rules, seed)):
        if rules.n_players > 4 and i % 3:  # a third of the positions: more seats cost more
            continue
        belief = Belief(InfoState(rules, obs, mask))
        plain = Belief(InfoState(rules, obs[:size], mask))
        yield belief.sample_hands(12, rng=i)
        if rules.n_players == 4 or i % 9 == 0:  # counted marginals cost most with more seats
            yield belief.card_marginals()
            yield belief.face_down_posterior()
            yield belief.trump_posterior()
        yield plain.sample_hands(12, rng=i)
        if i % 3 == 0:
            yield sample_worlds(InfoState(rules, obs, mask), 6, rng=i, seat=seat)
            yield sample_worlds(InfoState(rules, obs[:size], mask), 6, rng=i, seat=seat)
            weighed = belief.weigh(bot, 16, rng=i, seat=seat)
            yield weighed.log_weights
            yield weighed.hands
            yield weighed.worlds
            yield weighed.card_marginals()
            yield weighed.trump_posterior()
            yield belief.worlds(4, rng=i, seat=seat, policy=bot, draws=12)
        if i % 3 == 1:
            yield belief.likeliest(bot, 4, 16, rng=i, seat=seat)
            yield belief.likeliest(bot, 4, 16, rng=i, seat=seat, recent=3, opponents_only=True, margin=2.0)
            yield belief.likeliest(bot, 4, 16, rng=i, seat=seat, mix=True)
        if i % 3 == 2:
            yield belief.weigh(randomly, 8, rng=i, seat=seat, epsilon=0.3).log_weights


OBSERVATIONS = {
    "standard": "1591de2ae1e46fa701e69f0e2f0c9ee7e8cf87ee0ccf2c92aa099575fee333b7",
    "band": "85e793c79fd60a3c5e15d42fad630facea86890435b115791f693971ddcdce60",
    "band_auto": "b45dacd0072beef9892c1b5ab0e6510e51514d8b997d7208196126bcc10bd80f",
    "open": "7bf1f40a5dd6ac5d475aad891a6e700852209f72ab9d14eb9e10d9a14408a2ff",
    "app": "1591de2ae1e46fa701e69f0e2f0c9ee7e8cf87ee0ccf2c92aa099575fee333b7",
    "dehla_pakad": "a9f41b5b253c9b44c95df9152bd2ec82f8545e6bae0f1f087ba9d00790a90540",
    "standard_6": "52987a1de13c001ed84ccea5378ebfbabffa2f86c3ff4551b54e4b4fb0a8b8ce",
    "standard_8": "aa991bf2284d1d19a663b24a7d3591c1a8343a33c332135b8920b37ba92720d2",
    "band_6": "0252a2e83ca948bb9ea18db918510d9d61d773c18f382132ea9d8a751db2d90b",
    "band_8": "209ad1b1679316630d742ca4eb45c6b07461cd11b0504bbb5e7c70286c3945c6",
}


@pytest.mark.parametrize("name", list(RULES))
def test_observations_unchanged(name: str) -> None:
    assert digest(observation_parts(RULES[name], 11)) == OBSERVATIONS[name]


BOTS = {
    "standard": "3969a2f7102bdea69b0012ee7004a96c097657679571a7bd37cebd4c37f5322b",
    "band": "ee905b0c0821005726463de92b41957e83e87feeada5ff3304375ef8a6fd73c3",
    "band_auto": "a5473b94f14e15d4e438c3abdcccc88c5876a316ce270513f6603c55e47318c8",
    "open": "33a8451fb5e3d939077848c70bcf8ddc0e19fd065013fa37e3510180115a8fba",
    "app": "d5ba3ed454a359937945c89cd2a74ee0590ea4ad3d76aac5d3da642274f9b63c",
    "dehla_pakad": "d84e03ff1afe8d52553a90bc7db1c919b6a28b3a3ce95994a505ffa81605c473",
    "standard_6": "4c49b47dfc5b1f4f7f5cde76ac3bf0e0c9fa3c732e2aa9d1f4ca3921de17b3ee",
    "standard_8": "e1721cbc6f1a0f18c7aeb4f11470b38a3d60bb1dbdcaccdf228ca4a2b60699a9",
    "band_6": "d3131976ccb6a9448d3915567280a7f1fccce61ea9d6a8e9fc595b81deff6f47",
    "band_8": "3060ea1cd1d69a9689c05db709878e421d7568fff39ef2d09d05528feb76ae4f",
}


@pytest.mark.parametrize("name", list(RULES))
def test_bot_decisions_unchanged(name: str) -> None:
    got = digest(part for level in ("easy", "medium", "hard") for part in bot_parts(RULES[name], level, 5))
    assert got == BOTS[name]


SEARCH = {
    "standard": "acc4e4d5239da7a3c13dd4fb84b17f532d5a4c033658a4a50183dc2449dad0ee",
    "band": "0e9b37db2a0cfb8a81a42db50fe7a074ec877952e1e6ce0acdf8489f3dce2e11",
    "band_auto": "6ae12c335e4e182793fb5f324048412dd5b6988b5553c2989eeabf6c80354e7f",
    "open": "e03bb293d4f97d9aabf14ae43e0795dbe8efd33327dbd5d580445c2fc10a4d18",
    "app": "0373dccef5da4b599b507e7a553d4f3395d61b0e520b13d95938525fec386d33",
    "dehla_pakad": "4cbc561f698724ede3fc2dfa72c81a210146533425ceb4f8be7e1ffc8a14c070",
}
SEARCH_DEFAULT = {
    "standard": "513ac6c294c886f373109e47eadb9ae95a8c47dd4c794f4f1ea1c6380b72fc96",
    "band": "9c534ba40d7e470b51bf8b4c1b670278aa9ffd1911a2db74563786cbd0d7f9d2",
}


@pytest.mark.parametrize("name", list(PRESETS))
def test_search_decisions_unchanged(name: str) -> None:
    assert digest(search_parts(RULES[name], "search:k=8", 3, games=2)) == SEARCH[name]


@pytest.mark.parametrize("name", list(SEARCH_DEFAULT))
def test_default_search_decisions_unchanged(name: str) -> None:
    assert digest(search_parts(RULES[name], "search", 4, games=1, steps=8)) == SEARCH_DEFAULT[name]


BELIEF = {
    "standard": "02b1b941d31946735585f87bf5f7e5aa39cef1fe4f60630a1ded5099cecfbcbb",
    "band": "132ea55f90f79fbd425b9872ef73afd6a3af460a9c742a98a663f53792df9e48",
    "band_auto": "e9cdc38ad8826d74dfc96705b511ee6bbe582e89d78321c39b3bdfdc0d87dea7",
    "open": "81c7c583193846f0b06f56f90b8914d31e45d95ae8844fe84d6fc4587d57a88b",
    "dehla_pakad": "ea765248e7e1d4377b5785dddd296e5f9e8fd972cce4a2ead22f8dd9071e3561",
    "band_6": "ec83ba6cc564a99ab912e408babba95c4dd1e0527c1be5e173f9a21e51cd28ad",
}


@pytest.mark.parametrize("name", list(BELIEF))
def test_belief_unchanged(name: str) -> None:
    assert digest(belief_parts(RULES[name], 7)) == BELIEF[name]
