"""Seeding: the same seed gives the same games, different seeds different deals, explicit
options do not shift the random draws, and the global ``random`` / ``np.random`` are never used."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from pettingzoo.test import seed_test

import agents
import mendikot_env
from mendikot_env import core
from mendikot_env.analysis import deal_cards
from mendikot_env.arena import duplicate_arena, duplicate_matches, league
from mendikot_env.cli import main
from mendikot_env.observation import ObservationEncoder, encode_state
from mendikot_env.rules import Rules
from mendikot_env.seeding import SEED_MAX, check_seed, derived_seed, make_rng
from mendikot_env.wrappers import MendikotGymEnv, MendikotVectorEnv

RULES = [
    Rules(),
    Rules(trump="band"),
    Rules(trump="band", reveal="auto", n_players=6),
    Rules(trump="open", n_players=8),
    Rules(collection="dehla"),
]
IDS = ["cut", "band", "band_auto6", "open8", "dehla"]


def playout(rules: Rules, seed: int | np.random.Generator, batch: int = 64) -> tuple[core.State, list[np.ndarray]]:
    """Deal and play a batch to the end with random legal actions from one generator."""
    rng = np.random.default_rng(seed)
    state = core.new_hands(rules, batch, rng)
    history = []
    while not state.done.all():
        actions = core.random_legal_actions(core.legal_bits(state), rng)
        history.append(actions)
        core.step(state, np.maximum(actions, 0))
    return state, history


@pytest.mark.parametrize("rules", RULES, ids=IDS)
def test_same_seed_same_games(rules: Rules) -> None:
    a = core.new_hands(rules, 100, 123)
    b = core.new_hands(rules, 100, np.random.default_rng(123))
    assert np.array_equal(a.deal, b.deal) and np.array_equal(a.dealer, b.dealer)
    assert np.array_equal(a.open_card, b.open_card)
    (sa, ha), (sb, hb) = playout(rules, 5), playout(rules, 5)
    assert len(ha) == len(hb) and all(np.array_equal(x, y) for x, y in zip(ha, hb, strict=True))
    ra, rb = core.hand_results(sa), core.hand_results(sb)
    assert np.array_equal(ra.trick_winners, rb.trick_winners) and np.array_equal(ra.winner, rb.winner)


@pytest.mark.parametrize("rules", RULES, ids=IDS)
def test_different_seeds_different_deals(rules: Rules) -> None:
    a = core.new_hands(rules, 50, 1)
    b = core.new_hands(rules, 50, 2)
    assert (a.deal != b.deal).any(axis=1).all()  # every single game differs
    # Within a batch, the games differ from each other too.
    assert len({tuple(row) for row in a.deal.tolist()}) == 50
    # And the dealers are spread over the seats.
    many = core.new_hands(rules, 400, 3)
    assert set(many.dealer.tolist()) == set(range(rules.n_players))
    if rules.trump == "open":
        assert len(set(many.open_card.tolist())) > 20
    else:
        assert (many.open_card == -1).all()


@pytest.mark.parametrize("rules", RULES, ids=IDS)
def test_explicit_dealer_or_open_card_does_not_change_the_cards(rules: Rules) -> None:
    free = core.new_hands(rules, 20, 9)
    given_dealer = core.new_hands(rules, 20, 9, dealers=2)
    assert np.array_equal(free.deal, given_dealer.deal)
    assert (given_dealer.dealer == 2).all() and (given_dealer.current == 3 % rules.n_players).all()
    assert np.array_equal(free.open_card, given_dealer.open_card)
    per_game = core.new_hands(rules, 20, 9, dealers=np.arange(20) % rules.n_players)
    assert np.array_equal(free.deal, per_game.deal)
    assert per_game.dealer.tolist() == (np.arange(20) % rules.n_players).tolist()
    deals = deal_cards(free).tolist()
    given_deal = core.new_hands(rules, 20, 9, deals=deals)
    assert np.array_equal(free.deal, given_deal.deal) and np.array_equal(free.dealer, given_deal.dealer)
    if rules.trump == "open":
        given_open = core.new_hands(rules, 20, 9, open_cards=int(free.deal[0, 0]).bit_length() - 1)
        assert np.array_equal(free.deal, given_open.deal) and np.array_equal(free.dealer, given_open.dealer)


def test_open_card_is_only_for_open_trump() -> None:
    with pytest.raises(ValueError, match="open"):
        core.new_hands(Rules(), 1, 0, open_cards=5)


@pytest.fixture
def no_global_rng(monkeypatch: pytest.MonkeyPatch):
    """Make every global random function of ``random`` and ``np.random`` raise, and check
    afterwards that the global generator states did not move."""
    np_state = np.random.get_state()
    py_state = random.getstate()

    def forbidden(*args, **kwargs):
        raise AssertionError("the global random generator was used")

    legacy = np.random.mtrand._rand
    for name in dir(np.random):
        if getattr(getattr(np.random, name), "__self__", None) is legacy:
            monkeypatch.setattr(np.random, name, forbidden)
    for name in (
        "random",
        "randint",
        "randrange",
        "choice",
        "choices",
        "shuffle",
        "sample",
        "uniform",
        "gauss",
        "getrandbits",
        "seed",
        "randbytes",
    ):
        monkeypatch.setattr(random, name, forbidden)
    assert np.random.rand is forbidden and np.random.shuffle is forbidden and random.random is forbidden
    yield
    monkeypatch.undo()
    assert random.getstate() == py_state
    after = np.random.get_state()
    assert after[0] == np_state[0] and np.array_equal(after[1], np_state[1]) and after[2:] == np_state[2:]


@pytest.mark.parametrize("rules", RULES, ids=IDS)
def test_global_random_is_never_used(rules: Rules, no_global_rng: None) -> None:
    # The core: deal (with and without options), masks, steps, results.
    state, _ = playout(rules, 0, batch=16)
    core.hand_results(state)
    core.new_hands(rules, 4, None)
    core.new_hands(rules, 4, 1, dealers=0)
    # Observations and the state tensor.
    encoder = ObservationEncoder(rules)
    encoder.encode(state, np.zeros(16, dtype=np.int64))
    encode_state(state, encoder)
    # The env, seeded and unseeded, hand and match episodes.
    for episode in ("hand", "match"):
        env = mendikot_env.env(rules, episode=episode, target=2, render_mode="ansi")
        for seed in (0, None):
            env.reset(seed=seed)
            rng = np.random.default_rng(0)
            for _agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
                env.step(action)
            assert env.agents == [] and isinstance(env.render(), str)
        env.close()


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"rules": "band"},
        {"rules": "band_auto", "n_players": 6},
        {"rules": "open", "n_players": 8},
        {"rules": "dehla_pakad", "episode": "match", "target": 2},
        {"rules": "app", "episode": "match", "reward": "points"},
    ],
    ids=["standard", "band", "band_auto6", "open8", "dehla_match", "app_match"],
)
def test_env_seed_test(kwargs: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seed_test(lambda: mendikot_env.env(**kwargs), num_cycles=50)


def env_transcript(env, seed: int | None) -> list:
    """Observations, rewards and actions of a whole episode played from a fixed action generator."""
    env.reset(seed=seed)
    rng = np.random.default_rng(99)
    out = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward))
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return out


def test_env_same_seed_same_episode_and_different_seeds_differ() -> None:
    a = env_transcript(mendikot_env.env("band"), 4)
    b = env_transcript(mendikot_env.env("band"), 4)
    c = env_transcript(mendikot_env.env("band"), 5)
    assert a == b
    assert a[0][1] != c[0][1]  # a different first deal


def test_env_reset_without_seed_continues_the_seeded_stream() -> None:
    e1, e2 = mendikot_env.env(), mendikot_env.env()
    e1.reset(seed=3)
    e2.reset(seed=3)
    firsts = []
    for env in (e1, e2):
        deals = []
        for _ in range(3):
            env.reset()
            deals.append(env.unwrapped.game.deal.copy())
        firsts.append(deals)
    assert all(np.array_equal(x, y) for x, y in zip(*firsts, strict=True))
    assert not np.array_equal(firsts[0][0], firsts[0][1])  # a new deal each reset


BAD_SEEDS = [-1, 1.5, "1", True, SEED_MAX + 1]


@pytest.mark.parametrize("seed", BAD_SEEDS)
def test_every_entry_point_refuses_a_bad_seed_naming_it(seed: object) -> None:
    """numpy would fail deep inside (or take a float's meaning silently), torch overflows."""
    message = rf"must be an integer 0 to {SEED_MAX} \(2\*\*63 - 1\) \(or None\), got {seed!r}"
    calls = {
        "seed": lambda: MendikotGymEnv().reset(seed=seed),
        "seed ": lambda: MendikotVectorEnv(2).reset(seed=seed),
        "rng": lambda: core.new_hands(Rules(), 2, rng=seed),
        "rng ": lambda: core.random_legal_actions(core.legal_bits(core.new_hands(Rules(), 2, 0)), seed),
        "seed  ": lambda: agents.make("random", Rules(), seed=seed),
        "seed   ": lambda: agents.make("hard", Rules(), seed=seed),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match=rf"^{name.strip()} {message}"):
            call()
    random = agents.make("random", Rules())
    for call in (
        lambda: duplicate_arena(Rules(), random, random, 2, seed=seed),
        lambda: duplicate_matches(Rules(), random, random, 1, seed=seed),
        lambda: league(Rules(), [random, agents.make("easy", Rules())], 2, seed=seed),
    ):  # the deals must replay: no None either
        with pytest.raises(ValueError, match=rf"^seed must be an integer 0 to {SEED_MAX} \(2\*\*63 - 1\), got"):
            call()


def test_seeds_in_range_pass_and_derived_seeds_stay_in_range() -> None:
    assert check_seed(np.int64(7)) == 7 and type(check_seed(np.int64(7))) is int and check_seed(None) is None
    generator = np.random.default_rng(3)
    assert make_rng(generator) is generator
    bits = core.legal_bits(core.new_hands(Rules(), 4, 0))
    assert np.array_equal(core.random_legal_actions(bits, 5), core.random_legal_actions(bits, make_rng(5)))
    assert make_rng(SEED_MAX).integers(1 << 30) == np.random.default_rng(SEED_MAX).integers(1 << 30)
    assert derived_seed(SEED_MAX * 2 + 1) == SEED_MAX and derived_seed(5) == 5
    env = MendikotGymEnv(others=agents.make("hard", Rules()))
    env.reset(seed=SEED_MAX)  # seeds its agents with SEED_MAX + 1, folded into range
    assert env.agents[1].rng is not None
    for wrapper in (MendikotGymEnv(others=agents.make("hard", Rules())), MendikotVectorEnv(2, others="hard")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # numpy warns when np.int64(SEED_MAX) + 1 wraps round
            first = wrapper.reset(seed=np.int64(SEED_MAX))[0]  # numpy seeds, as a seed list gives them
        assert np.array_equal(first, wrapper.reset(seed=SEED_MAX)[0])


def test_the_largest_seed_plays_an_arena_with_a_trained_agent(capsys: pytest.CaptureFixture[str]) -> None:
    # The agents' seeds (seed * 2 + 1, + 2) are folded back into range for torch's manual_seed.
    assert main(["arena", "--a", "trained", "--b", "hard", "--deals", "2", "--seed", str(SEED_MAX)]) == 0
    assert "win rate of A" in capsys.readouterr().out
