"""The PettingZoo AEC environment: API conformance, rewards, infos, matches, options, errors,
pickling and rendering."""

from __future__ import annotations

import copy
import pickle
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.test import api_test, render_test, state_test
from support import (
    BAND_HANDS,
    LAST_CARD_HANDS,
    SCRIPT6,
    SCRIPT13,
    SWEEP_HANDS,
    card,
    play_episode,
    random_policy,
    scripted_hands,
)

import mendikot_env
from mendikot_env import core, mendikot_v0
from mendikot_env.analysis import deal_cards
from mendikot_env.cards import card_str, parse_card
from mendikot_env.observation import ObservationEncoder
from mendikot_env.rules import Rules
from mendikot_env.wrappers import MendikotVectorEnv

API_CASES = [
    ({}, "standard"),
    ({"rules": "band"}, "band"),
    ({"rules": "band_auto", "n_players": 6}, "band_auto-6p"),
    ({"rules": "open", "n_players": 8}, "open-8p"),
    ({"rules": "dehla_pakad", "reward": "points"}, "dehla"),
    ({"episode": "match", "target": 2}, "standard-match"),
    ({"rules": "band", "episode": "match", "target": 2, "n_players": 6}, "band-match-6p"),
    ({"rules": "app", "episode": "match", "reward": "points", "target": 3}, "app-match"),
]


def lowest_card(obs: dict) -> int:
    """The lowest legal card (never asking)."""
    return int(np.flatnonzero(obs["action_mask"][:52])[0])


# =========================================================================== PettingZoo tests


@pytest.mark.parametrize(("kwargs", "label"), API_CASES, ids=[label for _, label in API_CASES])
def test_pettingzoo_api_test(kwargs: dict, label: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(seeded(mendikot_env.env(**kwargs)), num_cycles=200)
        api_test(seeded(mendikot_env.raw_env(**kwargs)), num_cycles=60)


@pytest.mark.parametrize("rules", ["standard", "band"])
def test_pettingzoo_state_test(rules: str) -> None:
    env = mendikot_env.env(rules)
    state_test(env, mendikot_env.env(rules))
    env.reset(seed=0)
    assert env.unwrapped.state_space.contains(env.unwrapped.state())
    assert env.unwrapped.state_space.shape == (env.unwrapped.state_layout.size,)


def seeded(env):
    """Seed the spaces api_test samples from, so that it plays the same games every run."""
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(100 + i)
        env.observation_space(agent).seed(200 + i)
    return env


@pytest.mark.parametrize(("kwargs", "label"), API_CASES[:5], ids=[label for _, label in API_CASES[:5]])
def test_pettingzoo_render_test(kwargs: dict, label: str, capsys: pytest.CaptureFixture) -> None:
    def has_symbols(text: str) -> bool:
        return isinstance(text, str) and any(symbol in text for symbol in "♣♦♥♠")

    render_test(lambda **kw: mendikot_env.env(**kwargs, **kw), custom_tests={"ansi": has_symbols})
    assert "♠" in capsys.readouterr().out  # human mode prints the table


def test_versioned_module_and_metadata() -> None:
    env = mendikot_v0.env()
    assert env.metadata["name"] == "mendikot_v0"
    assert set(env.metadata["render_modes"]) == {"human", "ansi", "rgb_array"}
    assert isinstance(mendikot_v0.raw_env(), mendikot_env.raw_env)
    assert isinstance(env.unwrapped, mendikot_env.raw_env)


@pytest.mark.parametrize("n", [4, 6, 8])
def test_agents_and_spaces(n: int) -> None:
    env = mendikot_env.env(n_players=n)
    env.reset(seed=0)
    assert env.possible_agents == [f"player_{i}" for i in range(n)] and env.agents == env.possible_agents
    size = ObservationEncoder(Rules(n_players=n)).size
    for agent in env.agents:
        space = env.observation_space(agent)
        assert isinstance(space, spaces.Dict)
        assert space["observation"].shape == (size,) and space["observation"].dtype == np.float32
        assert space["action_mask"].shape == (53,) and space["action_mask"].dtype == np.int8
        assert env.action_space(agent) == spaces.Discrete(53)
        obs = env.observe(agent)
        assert obs["observation"].dtype == np.float32 and obs["observation"].shape == (size,)
        assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].shape == (53,)
        assert space.contains(obs)


# =========================================================================== masks, rewards, infos


@pytest.mark.parametrize("rules", ["standard", "band", "band_auto", "dehla_pakad"])
def test_masks_only_for_the_agent_to_act_and_equal_to_the_core(rules: str) -> None:
    env = mendikot_env.env(rules)
    env.reset(seed=1)
    policy = random_policy(1)
    raw = env.unwrapped
    while not any(env.terminations.values()):
        acting = env.agent_selection
        for agent in env.agents:
            mask = env.observe(agent)["action_mask"]
            if agent == acting:
                expected = core.legal_action_mask(raw.game)[0].astype(np.int8)
                assert np.array_equal(mask, expected) and mask.sum() > 0
            else:
                assert not mask.any(), f"{agent} has a mask while {acting} acts"
        env.step(policy(env.observe(acting)))
    for agent in env.agents:  # nobody has a legal action once the hand is over
        assert not env.observe(agent)["action_mask"].any()


def test_infos_empty_and_rewards_zero_until_the_end() -> None:
    env = mendikot_env.env("band")
    env.reset(seed=2)
    assert env.infos == {agent: {} for agent in env.possible_agents}
    assert all(r == 0 for r in env.rewards.values())
    assert not any(env.terminations.values()) and not any(env.truncations.values())
    policy = random_policy(2)
    steps = 0
    while not any(env.terminations.values()):
        env.step(policy(env.observe(env.agent_selection)))
        steps += 1
        if not any(env.terminations.values()):
            assert all(r == 0 for r in env.rewards.values())
            assert all(info == {} for info in env.infos.values())
    assert steps >= 53  # hide + 52 cards (+ asks)


def test_end_of_hand_rewards_infos_and_agents_stay_until_stepped_with_none() -> None:
    env = mendikot_env.env()
    env.reset(seed=3)
    policy = random_policy(3)
    while not any(env.terminations.values()):
        env.step(policy(env.observe(env.agent_selection)))
    raw = env.unwrapped
    result = raw.result
    assert result == core.hand_results(raw.game).as_dict(0)
    assert set(result) == {"tens", "tricks", "winner", "mendikot", "whitewash", "next_dealer", "trump", "trick_winners"}
    assert all(env.terminations.values()) and env.agents == env.possible_agents
    for agent in env.agents:
        assert env.infos[agent]["result"] == result
        sign = 1 if int(agent[-1]) % 2 == result["winner"] else -1
        assert env.rewards[agent] == sign and env._cumulative_rewards[agent] == sign
    assert sum(env.rewards.values()) == 0
    seen = []
    remaining = list(env.agents)
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        assert term and not trunc and info["result"] == result
        seen.append((agent, reward))
        assert agent in env.agents and env.agents == remaining
        env.step(None)
        remaining.remove(agent)
        assert env.agents == remaining
        assert all(type(r) is float for r in env.rewards.values()), env.rewards  # PettingZoo clears to int 0
    assert sorted(a for a, _ in seen) == sorted(env.possible_agents)
    rewards = dict(seen)
    assert {a: rewards[a] for a in env.possible_agents} == {
        a: (1.0 if int(a[-1]) % 2 == result["winner"] else -1.0) for a in env.possible_agents
    }
    assert env.agents == []


def test_rewards_hold_only_the_last_steps_rewards_in_a_match() -> None:
    env = mendikot_env.env(episode="match", target=3)
    env.reset(seed=4)
    policy = random_policy(4)
    hands = 0
    while not any(env.terminations.values()):
        env.step(policy(env.observe(env.agent_selection)))
        nonzero = any(r != 0 for r in env.rewards.values())
        deals = env.infos[env.possible_agents[0]].get("match", {}).get("deals", 0)
        if deals > hands:  # this step ended a hand
            hands = deals
            assert nonzero and sum(env.rewards.values()) == 0
        else:
            assert not nonzero, "a reward from an earlier step is still in env.rewards"
    assert hands >= 3


# =========================================================================== reward modes


@pytest.mark.parametrize(
    ("deal", "fields", "options", "winner", "win_reward", "points"),
    [
        # A whitewash (open trump spades, seat 0 holds them all): tiered pays 3.
        ("sweep", {"trump": "open"}, {"dealer": 3, "open_card": card("5S")}, 0, 1, 3),
        # A mendikot with a trick lost (band, the last-card hand): tiered pays 2.
        ("last_card", {"trump": "band"}, {"dealer": 3}, 0, 1, 2),
        # A plain win on tricks: 1.
        ("script13", {}, {"dealer": 3}, 0, 1, 1),
    ],
)
def test_reward_modes(deal: str, fields: dict, options: dict, winner: int, win_reward: int, points: int) -> None:
    hands = {"sweep": SWEEP_HANDS, "last_card": LAST_CARD_HANDS, "script13": scripted_hands(SCRIPT13)}[deal]
    for reward, scoring, size in [
        ("win", "tiered", win_reward),
        ("points", "tiered", points),
        ("points", "points_per_hand", 1),
        ("points", "fixed_deals", 1),  # fixed_deals counts hands won: no tier
    ]:
        env = mendikot_env.env(reward=reward, scoring=scoring, **fields)
        env.reset(seed=0, options={"deal": hands, **options})
        if fields.get("trump") == "band":
            env.step(card("AD"))  # the last-card hand: seat 0 hides the AD
        if deal == "script13":
            play_rows_env(env, SCRIPT13)
        turns = play_episode(env, lowest_card)
        final = {agent: reward_ for agent, reward_, term, _ in turns if term}
        assert env.unwrapped.result["winner"] == winner
        assert final == {a: float(size if int(a[-1]) % 2 == winner else -size) for a in env.possible_agents}


def test_drawn_hand_rewards_zero() -> None:
    env = mendikot_env.env(n_players=6)
    env.reset(options={"deal": scripted_hands(SCRIPT6), "dealer": 5})
    play_rows_env(env, SCRIPT6)
    assert env.unwrapped.result["winner"] is None and env.unwrapped.result["next_dealer"] == 5
    assert all(r == 0 for r in env.rewards.values()) and all(env.terminations.values())


def play_rows_env(env, rows: list[str]) -> None:
    for row in rows:
        by_seat = row.split()
        for _ in by_seat:
            seat = env.possible_agents.index(env.agent_selection)
            env.step(card(by_seat[seat]))


# =========================================================================== match episodes


@pytest.mark.parametrize(
    "fields",
    [
        {"target": 3},
        {"rules": "app", "target": 4},
        {"rotation": "loser_deals_next_after_whitewash", "n_players": 6, "target": 2},
        {"rules": "band", "n_players": 8, "target": 2},
        {"scoring": "fixed_deals", "target": 4},
    ],
    ids=["standard", "app", "6p", "band-8p", "fixed_deals"],
)
def test_match_episode(fields: dict) -> None:
    env = mendikot_env.env(episode="match", reward="points", **fields)
    rules = env.unwrapped.rules
    env.reset(seed=5, options={"dealer": 1})
    raw = env.unwrapped
    policy = random_policy(5)
    dealer = 1
    assert int(raw.game.dealer[0]) == dealer
    scores = [0, 0]
    deals = 0
    while True:
        assert int(raw.game.dealer[0]) == dealer
        env.step(policy(env.observe(env.agent_selection)))
        info = env.infos[env.possible_agents[0]]
        if info.get("match", {}).get("deals", 0) == deals:
            continue
        # A hand just ended.
        deals += 1
        result, match = info["result"], info["match"]
        assert all(env.infos[a] == info for a in env.possible_agents)
        assert result == raw.result and match["deals"] == deals
        points = 0
        if result["winner"] is not None:
            points = 1
            if rules.scoring == "tiered":
                points = 3 if result["whitewash"] else 2 if result["mendikot"] else 1
            scores[result["winner"]] += points
        assert match["scores"] == scores
        for agent in env.possible_agents:
            team = int(agent.split("_")[1]) % 2
            assert env.rewards[agent] == (
                0 if result["winner"] is None else points if team == result["winner"] else -points
            )
        over = deals >= rules.target if rules.scoring == "fixed_deals" else max(scores) >= rules.target
        assert match["over"] == over
        if over:
            assert all(env.terminations.values())
            leader = 0 if scores[0] > scores[1] else 1 if scores[1] > scores[0] else None
            assert match["winner"] == leader
            break
        assert not any(env.terminations.values())
        # The next hand is dealt by the rotation rule, with fresh cards.
        dealer = result["next_dealer"]
        assert int(raw.game.dealer[0]) == dealer and int(raw.game.trick_no[0]) == 0
        assert env.agent_selection == f"player_{(dealer + 1) % rules.n_players}"
        obs = env.observe(env.agent_selection)
        team = int(env.agent_selection[-1]) % 2
        seen = raw.observation_layout.view(obs["observation"], "match_score")
        np.testing.assert_allclose(seen, [scores[team] / rules.target, scores[1 - team] / rules.target], rtol=1e-6)
    assert deals >= (rules.target if rules.scoring == "fixed_deals" else 1)
    turns = play_episode(env, policy)
    assert len(turns) == rules.n_players and env.agents == []


def test_match_with_drawn_hands_keeps_the_dealer() -> None:
    env = mendikot_env.env(n_players=6, episode="match", target=1)
    env.reset(options={"deal": scripted_hands(SCRIPT6), "dealer": 5})
    play_rows_env(env, SCRIPT6)
    info = env.infos["player_0"]
    assert info["result"]["winner"] is None and info["match"] == {
        "scores": [0, 0],
        "deals": 1,
        "over": False,
        "winner": None,
    }
    assert not any(env.terminations.values())
    assert int(env.unwrapped.game.dealer[0]) == 5 and env.agent_selection == "player_0"


# =========================================================================== reset options


@pytest.mark.parametrize("rules", ["standard", "band", "open", "dehla_pakad"])
def test_options_replay_the_same_deal(rules: str) -> None:
    env = mendikot_env.env(rules)
    env.reset(seed=6)
    raw = env.unwrapped
    deal = deal_cards(raw.game)[0].tolist()
    options = {"deal": deal, "dealer": int(raw.game.dealer[0])}
    if rules == "open":
        options["open_card"] = int(raw.game.open_card[0])
    first = play_episode(env, random_policy(7))
    first_result = raw.result
    env.reset(seed=999, options=options)
    second = play_episode(env, random_policy(7))
    assert raw.result == first_result
    assert [(a, r, t) for a, r, t, _ in first] == [(a, r, t) for a, r, t, _ in second]


def test_dealer_option_alone_keeps_the_seeded_cards() -> None:
    env = mendikot_env.env()
    env.reset(seed=8)
    deal = env.unwrapped.game.deal.copy()
    env.reset(seed=8, options={"dealer": 2})
    assert np.array_equal(env.unwrapped.game.deal, deal)
    assert int(env.unwrapped.game.dealer[0]) == 2 and env.agent_selection == "player_3"


def test_unknown_option_warns_with_the_known_ones() -> None:
    env = mendikot_env.env()
    with pytest.warns(UserWarning) as record:
        env.reset(seed=0, options={"dealr": 1})
    message = " ".join(str(w.message) for w in record)
    assert "dealr" in message and "deal" in message and "dealer" in message and "open_card" in message
    assert env.agents == env.possible_agents  # it still resets
    # The warning points at the caller's line, not inside PettingZoo's wrappers.
    assert [w.filename for w in record] == [__file__]


def test_bad_seed_or_options_are_a_clear_value_error() -> None:
    env = mendikot_env.env()
    for seed in ("a", -1, 1.5, True, 2**63):
        with pytest.raises(ValueError, match=r"seed must be an integer 0 to 9223372036854775807 \(2\*\*63 - 1\)"):
            env.reset(seed=seed)
    with pytest.raises(ValueError, match=r"reset options must be a dict with keys \['deal', 'dealer', 'open_card'\]"):
        env.reset(options="deal")


@pytest.mark.parametrize(
    ("n", "mutate", "words"),
    [
        (4, lambda d: [d[0][:-1], d[1] + [d[0][-1]], d[2], d[3]], ["seat 0", "12 cards"]),
        (4, lambda d: d[:3], ["the deal has 3 hands", "4 players need 4 hands of 13"]),
        (4, lambda d: [d[0], d[1], d[2], d[3][:-1] + [d[0][0]]], ["more than once"]),
        (4, lambda d: [d[0][:-1] + [52], d[1], d[2], d[3]], ["52", "not in the pack"]),
        (4, lambda d: [d[0][:-1] + [-1], d[1], d[2], d[3]], ["-1", "not in the pack"]),
        (6, lambda d: [[0] + d[0][1:], *d[1:]], ["2s", "not in the pack"]),
        (4, lambda d: [[str(c) for c in d[0]], *d[1:]], ["seat 0: cannot read '", "as a card"]),
        (
            4,
            lambda d: [[c if (s, k) == (1, 0) else card_str(c) for k, c in enumerate(h)] for s, h in enumerate(d)],
            ["seat 1: cannot read '", "a deal is all ids or all card texts, not a mix"],
        ),
        (4, lambda d: [[card_str(c) if c != d[2][5] else "1X" for c in h] for h in d], ["seat 2", "'1X'"]),
        (4, lambda d: [[float(c) for c in hand] for hand in d], ["card ids 0..51 or card texts", "float64"]),
        (4, lambda d: 5, ["4 lists (one per seat) of 13 card ids", "got 5"]),
        (4, lambda d: [None] * 4, ["4 lists (one per seat) of 13 card ids", "None"]),
        (4, lambda d: [c for hand in d for c in hand], ["4 lists (one per seat) of 13 card ids"]),
        (4, lambda d: [d[0]], ["the deal has 1 hand of 13 cards;", "4 players need 4 hands of 13"]),
        (4, lambda d: np.array(d)[:3, :12], ["the deal has 3 hands of 12 cards", "4 players need 4 hands of 13"]),
    ],
    ids=[
        "wrong-counts",
        "missing-hand",
        "duplicate",
        "out-of-range",
        "negative",
        "two-with-6-players",
        "numbers-as-text",
        "ids-mixed-with-text",
        "bad-text",
        "floats",
        "a-number",
        "nones",
        "flat-list",
        "one-hand",
        "array-shape",
    ],
)
def test_malformed_deal_is_a_clear_value_error(n: int, mutate, words: list[str]) -> None:
    env = mendikot_env.env(n_players=n)
    env.reset(seed=0)
    deal = deal_cards(env.unwrapped.game)[0].tolist()
    game, observation = env.unwrapped.game, env.observe(env.agent_selection)["observation"]
    with pytest.raises(ValueError) as info:
        env.reset(seed=1, options={"deal": mutate(deal)})
    message = str(info.value)
    for word in words:
        assert word in message, message
    assert "game" not in message, message  # one deal: no batch wording
    # The env is as it was: same hand, and its seed still drives the next reset.
    assert env.unwrapped.game is game
    assert np.array_equal(env.observe(env.agent_selection)["observation"], observation)
    env.reset()
    again = mendikot_env.env(n_players=n)
    again.reset(seed=0)
    again.reset()
    assert np.array_equal(env.unwrapped.game.deal, again.unwrapped.game.deal)


def test_the_raw_env_before_reset_says_to_call_reset() -> None:
    env = mendikot_env.raw_env(render_mode="ansi")
    for call in (lambda: env.step(0), lambda: env.observe("player_0"), env.last, env.state, env.render):
        with pytest.raises(
            AttributeError, match=r"raw_env.(step|observe|last|state|render)\(\) before reset\(\): call reset\(\)"
        ):
            call()
    with pytest.raises(AttributeError, match="'raw_env' object has no attribute 'agents'"):
        env.num_agents  # noqa: B018  (PettingZoo's property, reading agents)
    assert not hasattr(env, "agents") and pickle.loads(pickle.dumps(env)).possible_agents == env.possible_agents
    env.reset(seed=0)
    assert env.agent_selection in env.agents  # set now, by the normal lookup


@pytest.mark.parametrize("make_env", [mendikot_env.raw_env, mendikot_env.env], ids=["raw", "wrapped"])
def test_after_the_episode_last_and_step_say_to_call_reset(make_env: Callable[[], AECEnv]) -> None:
    env = make_env()
    env.reset(seed=0)
    while env.agents:
        observation, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else int(np.flatnonzero(observation["action_mask"])[0]))
    after = r"raw_env.(last|step)\(\) after the episode is over \(env.agents is empty\): call reset\(\)"
    with pytest.raises(RuntimeError, match=after):
        env.last()
    if make_env is mendikot_env.raw_env:  # the wrapped env warns and ignores the step, as PettingZoo's do
        with pytest.raises(RuntimeError, match=after):
            env.step(None)
    env.reset(seed=1)
    assert env.last()[0]["action_mask"].any()


@pytest.mark.parametrize(
    ("make_env", "message"),
    [
        (lambda: mendikot_env.env(Rules(), rendermode="ansi"), r"\['rendermode'\].*other options are \['render_mode'"),
        (
            lambda: mendikot_env.env("band", rewards="points"),
            r"\['rewards'\].*other options are \['render_mode', 'reward'",
        ),
        (lambda: MendikotVectorEnv(2, render_mode="ansi"), r"\['render_mode'\].*other options are \['others', 'seat'"),
        (lambda: Rules().replace(trumps="band"), r"unknown Rules field\(s\) \['trumps'\]; known fields are"),
    ],
)
def test_a_misspelt_option_names_the_rules_fields_and_the_envs_own_options(make_env: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_env()


def test_render_seat_must_be_an_integer_seat() -> None:
    for bad in (1.0, True, 4):
        with pytest.raises(ValueError, match=rf"render_seat {bad!r} is not a seat; use None or an integer 0..3"):
            mendikot_env.env(render_mode="ansi", render_seat=bad)
    env = mendikot_env.env(render_mode="ansi", render_seat=np.int64(1))
    env.reset(seed=0)
    assert isinstance(env.render(), str) and env.unwrapped.render_seat == 1


def test_a_deal_and_open_card_given_as_text_equal_the_same_given_as_ids() -> None:
    env = mendikot_env.env(trump="open", n_players=6)
    env.reset(seed=0)
    deal = deal_cards(env.unwrapped.game)[0].tolist()
    texts = [[card_str(c, symbols=s % 2 == 1) for c in hand] for s, hand in enumerate(deal)]  # "TS" and "T♠"
    env.reset(options={"deal": texts, "dealer": 3, "open_card": "10H"})
    by_text = env.unwrapped.game
    env.reset(options={"deal": deal, "dealer": 3, "open_card": parse_card("TH")})
    assert np.array_equal(by_text.hands, env.unwrapped.game.hands) and by_text.open_card.tolist() == [parse_card("TH")]
    batch = core.new_hands(Rules(trump="open", n_players=6), 2, 0, deals=[texts, texts], open_cards=["AS", "3C"])
    assert np.array_equal(batch.hands[0], by_text.hands[0]) and batch.open_card.tolist() == [51, 1]


@pytest.mark.parametrize(
    ("kwargs", "options", "words"),
    [
        ({}, {"dealer": 4}, ["dealer", "4", "0..3"]),
        ({}, {"dealer": -1}, ["dealer", "-1"]),
        ({"trump": "open"}, {"open_card": 52}, ["open_card", "52"]),
        ({"trump": "open", "n_players": 6}, {"open_card": 13}, ["open_card", "13"]),
        ({}, {"open_card": 5}, ["open_card", "open"]),
        ({"trump": "open"}, {"open_card": "ZS"}, ["open_card: cannot read 'ZS' as a card"]),
        ({"trump": "open", "n_players": 6}, {"open_card": "2S"}, ["open_card 39", "not in the pack for 6"]),
    ],
)
def test_bad_dealer_or_open_card_is_a_clear_value_error(kwargs: dict, options: dict, words: list[str]) -> None:
    env = mendikot_env.env(**kwargs)
    with pytest.raises(ValueError) as info:
        env.reset(seed=0, options=options)
    for word in words:
        assert word in str(info.value), str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"render_mode": "video"}, "render_mode"),
        ({"reward": "score"}, "reward"),
        ({"episode": "game"}, "episode"),
        ({"render_seat": 4}, "render_seat"),
        ({"trump": "hidden"}, "trump"),
        ({"rules": "bridge"}, "bridge"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_env_arguments(kwargs: dict, word: str) -> None:
    with pytest.raises(ValueError, match=word):
        mendikot_env.env(**kwargs)


def test_env_takes_rules_in_every_form() -> None:
    expected = Rules(trump="band", n_players=6)
    for env in (
        mendikot_env.env(trump="band", n_players=6),
        mendikot_env.env("band", n_players=6),
        mendikot_env.env(Rules(trump="band"), n_players=6),
        mendikot_env.env({"trump": "band", "n_players": 6}),
    ):
        assert env.unwrapped.rules == expected


# =========================================================================== illegal actions


@pytest.mark.parametrize(
    "bad", ["not-held", 53, -1, 1.5, None, "7", True, 1.0, np.float32(2.0), np.array([3.0]), np.array(True)]
)
def test_raw_env_illegal_action_raises_naming_action_and_legal_ones(bad: object) -> None:
    env = mendikot_env.raw_env()
    env.reset(seed=0)
    mask = env.observe(env.agent_selection)["action_mask"]
    legal = np.flatnonzero(mask).tolist()
    if bad == "not-held":
        bad = next(a for a in range(53) if not mask[a])
    with pytest.raises(ValueError) as info:
        env.step(bad)
    message = str(info.value)
    assert repr(bad) in message and str(legal) in message, message
    assert np.array_equal(env.observe(env.agent_selection)["action_mask"], mask)  # nothing changed
    env.step(legal[0])


def test_raw_env_takes_numpy_integer_actions() -> None:
    import torch  # a hand-written torch loop steps with argmax() tensors

    env = mendikot_env.raw_env()
    env.reset(seed=0)
    as_integers = (np.int64, np.int32, np.array, lambda a: np.array([a], dtype=np.uint8), torch.tensor)
    for as_integer in (*as_integers, lambda a: torch.tensor([a], dtype=torch.int32)):
        agent = env.agent_selection
        action = int(np.flatnonzero(env.observe(agent)["action_mask"])[0])
        env.step(as_integer(action))
        seat = env.agent_name_mapping[agent]
        assert int(env.unwrapped.game.played[0, seat]) >> action & 1  # that card was played


@pytest.mark.parametrize("rules", ["standard", "band"])
def test_wrapped_env_illegal_action_ends_the_episode_against_the_offender(rules: str) -> None:
    env = mendikot_env.env(rules)
    env.reset(seed=0)
    policy = random_policy(0)
    for _ in range(6):
        env.step(policy(env.observe(env.agent_selection)))
    offender = env.agent_selection
    mask = env.observe(offender)["action_mask"]
    illegal = next(a for a in range(53) if not mask[a])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(illegal)
    assert all(env.terminations.values()) or all(env.truncations.values())
    assert env.rewards == {a: -1.0 if a == offender else 0.0 for a in env.agents}
    assert all(type(r) is float for r in [*env.rewards.values(), *env.unwrapped._cumulative_rewards.values()])
    rewards = {}
    for agent in env.agent_iter():
        _, reward, term, trunc, _ = env.last()
        assert term or trunc
        rewards[agent] = reward
        env.step(None)
    assert rewards[offender] == -1
    assert all(r == 0 for a, r in rewards.items() if a != offender)
    assert env.agents == []


def test_after_an_illegal_action_every_mask_is_zero_and_there_is_no_result() -> None:
    env = mendikot_env.env()
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    offender = env.agent_selection
    illegal = int(np.flatnonzero(env.observe(offender)["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(illegal)
    for agent in env.agents:
        assert not env.observe(agent)["action_mask"].any(), agent
        assert env.infos[agent] == {}
    assert env.unwrapped.result is None
    for _ in env.agent_iter():  # step the dead agents out; observing afterwards still works
        env.step(None)
    assert env.agents == []
    assert not any(env.observe(agent)["action_mask"].any() for agent in env.possible_agents)


def test_an_illegal_action_in_a_match_leaves_the_last_finished_hands_infos() -> None:
    env = mendikot_env.env(episode="match", target=3)
    env.reset(seed=0)
    policy = random_policy(0)
    while env.unwrapped.result is None:  # finish the first hand with legal moves
        env.step(policy(env.observe(env.agent_selection)))
    first_result = copy.deepcopy(env.unwrapped.result)  # copies: an in-place change must show
    infos_before = copy.deepcopy({agent: env.infos[agent] for agent in env.agents})
    assert all(info["match"]["deals"] == 1 and not info["match"]["over"] for info in infos_before.values())
    offender = env.agent_selection
    illegal = int(np.flatnonzero(env.observe(offender)["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(illegal)
    assert all(env.terminations.values()) and all(env.truncations.values())
    assert env.unwrapped.result == first_result
    assert {agent: env.infos[agent] for agent in env.agents} == infos_before
    assert not any(env.observe(agent)["action_mask"].any() for agent in env.agents)


def test_each_agent_gets_its_own_result_and_observation_space() -> None:
    env = mendikot_env.env(episode="match", target=3)
    env.reset(seed=1)
    policy = random_policy(1)
    while env.unwrapped.result is None:
        env.step(policy(env.observe(env.agent_selection)))
    infos = [env.infos[agent] for agent in env.possible_agents]
    assert all(info == infos[0] for info in infos)
    infos[0]["result"]["tens"].append(99)
    infos[0]["match"]["scores"].append(99)
    assert all(99 not in info["result"]["tens"] and 99 not in info["match"]["scores"] for info in infos[1:])
    assert 99 not in env.unwrapped.result["tens"]
    spaces = [env.observation_space(agent) for agent in env.possible_agents]
    assert len({id(space) for space in spaces}) == len(spaces)
    spaces[0].seed(0)
    spaces[1].seed(0)
    first = spaces[0].sample()["observation"]
    spaces[2].sample()  # another agent's draw leaves player_1's stream alone
    assert np.array_equal(first, spaces[1].sample()["observation"])


# =========================================================================== ask through the env


def test_ask_keeps_the_turn() -> None:
    env = mendikot_env.env("band")
    env.reset(options={"deal": BAND_HANDS, "dealer": 3})
    env.step(card("2H"))  # player_0 hides
    env.step(card("AS"))  # player_0 leads
    assert env.agent_selection == "player_1"
    mask = env.observe("player_1")["action_mask"]
    assert mask[52] == 1
    env.step(52)
    assert env.agent_selection == "player_1"  # asking does not end the turn
    assert np.flatnonzero(env.observe("player_1")["action_mask"]).tolist() == [card("AH")]
    assert all(r == 0 for r in env.rewards.values())


# =========================================================================== pickling


@pytest.mark.parametrize("kwargs", [{}, {"rules": "band"}, {"rules": "app", "episode": "match", "target": 2}])
def test_pickle_round_trip_mid_game(kwargs: dict) -> None:
    env = mendikot_env.env(**kwargs)
    env.reset(seed=10)
    policy = random_policy(10)
    for _ in range(23):
        env.step(policy(env.observe(env.agent_selection)))
    clone = pickle.loads(pickle.dumps(env))
    assert clone.agent_selection == env.agent_selection
    a = play_episode(env, random_policy(11))
    b = play_episode(clone, random_policy(11))
    assert len(a) == len(b)
    for (agent1, r1, t1, i1), (agent2, r2, t2, i2) in zip(a, b, strict=True):
        assert (agent1, r1, t1, i1) == (agent2, r2, t2, i2)
    assert env.unwrapped.result == clone.unwrapped.result
    # The unwrapped env pickles too, and the clone is independent of the original.
    raw = mendikot_env.raw_env()
    raw.reset(seed=1)
    raw_clone = pickle.loads(pickle.dumps(raw))
    raw.step(int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"])[0]))
    assert not np.array_equal(raw.game.hands, raw_clone.game.hands)


# =========================================================================== rendering


def test_render_ansi_shows_the_table_with_suit_symbols() -> None:
    env = mendikot_env.env("band", render_mode="ansi")
    env.reset(options={"deal": BAND_HANDS, "dealer": 3})
    env.step(card("2H"))
    env.step(card("AS"))
    text = env.render()
    assert isinstance(text, str)
    assert "♠" in text and "♥" in text and "♣" in text and "♦" in text
    assert "A♠" in text  # the card on the trick
    assert "face down" in text
    for agent in env.possible_agents:
        assert agent in text
    assert "tens" in text and "tricks" in text


def test_render_seat_shows_only_that_seats_hand() -> None:
    hands = BAND_HANDS
    env = mendikot_env.env("band", render_mode="ansi", render_seat=2)
    env.reset(options={"deal": hands, "dealer": 3})
    env.step(card("2H"))
    text = env.render()
    hand_lines = [line for line in text.splitlines() if line.strip().lstrip("*").startswith("player_") and "♠" in line]
    assert len(hand_lines) == 1 and "player_2" in hand_lines[0]
    assert "2♥" not in text  # seat 0's face-down card is not shown to seat 2
    debug = mendikot_env.env("band", render_mode="ansi")
    debug.reset(options={"deal": hands, "dealer": 3})
    debug.step(card("2H"))
    assert "face down: 2♥" in debug.render()


def test_render_human_prints_and_returns_none(capsys: pytest.CaptureFixture) -> None:
    env = mendikot_env.env(render_mode="human")
    env.reset(seed=0)
    assert env.render() is None
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    assert "♠" in capsys.readouterr().out


def test_render_at_the_end_shows_the_result() -> None:
    env = mendikot_env.env(trump="open", render_mode="ansi")
    env.reset(options={"deal": SWEEP_HANDS, "dealer": 3, "open_card": card("5S")})
    while not any(env.terminations.values()):
        env.step(lowest_card(env.observe(env.agent_selection)))
    text = env.render()
    assert "team 0 wins" in text and "whitewash" in text and "mendikot" in text


def test_observation_stays_in_its_space_at_the_end_of_a_tiered_match() -> None:
    # Tiered scoring pays 3 for a whitewash, so a match to 2 points ends on 3 points: the
    # match_score piece (points / target) must still fit the Box(0, 1) observation space.
    env = mendikot_env.env(trump="open", scoring="tiered", episode="match", target=2)
    env.reset(options={"deal": SWEEP_HANDS, "dealer": 3, "open_card": card("5S")})
    while not any(env.terminations.values()):
        env.step(lowest_card(env.observe(env.agent_selection)))
    assert env.infos["player_0"]["match"] == {"scores": [3, 0], "deals": 1, "over": True, "winner": 0}
    for agent in env.agents:
        obs = env.observe(agent)
        assert env.observation_space(agent).contains(obs), env.unwrapped.observation_layout.view(
            obs["observation"], "match_score"
        )
