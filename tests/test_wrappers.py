"""Gymnasium wrappers: the library checkers, masks, autoreset, rewards, illegal actions."""

from __future__ import annotations

import re

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import mendikot_env
from agents import RandomAgent, make, masked_uniform
from mendikot_env import GYM_ENV_ID, Rules
from mendikot_env.analysis import deal_cards
from mendikot_env.wrappers import MendikotGymEnv, MendikotVectorEnv

CONFIGS = [
    {},
    {"rules": "band"},
    {"rules": "band_auto", "control": "team"},
    {"rules": "open", "seat": 3},
    {"rules": "dehla_pakad", "n_players": 6},
    {"rules": "app", "n_players": 8, "seat": 5, "reward": "points"},
]


@pytest.mark.parametrize("config", CONFIGS)
def test_gym_env_passes_gymnasium_checker(config: dict) -> None:
    env = MendikotGymEnv(**config)
    check_env(env, skip_render_check=True)


@pytest.mark.parametrize("config", CONFIGS)
def test_gym_env_plays_full_hands_with_masks(config: dict) -> None:
    env = MendikotGymEnv(**config)
    rng = np.random.default_rng(0)
    learner_team = env.seats[0] % 2
    for episode in range(5):
        obs, info = env.reset(seed=episode)
        assert obs.dtype == np.float32 and env.observation_space.contains(obs)
        assert np.array_equal(info["action_mask"], env.action_masks())
        steps = 0
        while True:
            mask = env.action_masks()
            assert mask.any(), "the learner always has a legal action before the end"
            obs, reward, terminated, truncated, info = env.step(int(masked_uniform(mask[None], rng)[0]))
            steps += 1
            assert not truncated
            if terminated:
                break
            assert reward == 0.0
        result = info["result"]
        winner = result["winner"]
        expected = 0.0 if winner is None else (1.0 if winner == learner_team else -1.0)
        if config.get("reward") != "points":
            assert reward == expected
        else:
            assert np.sign(reward) == np.sign(expected)
        assert not env.action_masks().any()
        assert steps >= env.rules.n_tricks * len(env.seats)


def test_gym_env_illegal_action_ends_the_hand_against_the_learner() -> None:
    env = MendikotGymEnv()
    env.reset(seed=1)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    obs, reward, terminated, truncated, info = env.step(illegal)
    assert terminated and reward == -1.0 and info["illegal_action"]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_float_actions_are_refused_not_rounded() -> None:
    env = MendikotGymEnv()
    env.reset(seed=1)
    legal = int(np.flatnonzero(env.action_masks())[0])
    with pytest.raises(ValueError, match=r"action must be an integer 0\.\.52, got"):
        env.step(legal + 0.7)  # int() would quietly play the legal card
    envs = MendikotVectorEnv(2)
    _, info = envs.reset(seed=0)
    actions = masked_uniform(info["action_mask"], np.random.default_rng(1))
    with pytest.raises(ValueError, match="actions must be integers 0..52, got dtype float64"):
        envs.step(actions + 0.5)
    envs.step(actions)  # nothing was played by the refused call


def test_gym_env_reset_options_replay_a_deal_and_seed_opponents() -> None:
    env = MendikotGymEnv(others=make("medium", Rules(), seed=0))
    first, _ = env.reset(seed=5)
    deal = [[int(c) for c in np.flatnonzero(env.encoder.layout.view(first, "hand"))]]
    assert len(deal[0]) == 13
    again, _ = env.reset(seed=5)
    assert np.array_equal(first, again)
    with pytest.raises(ValueError, match="control"):
        MendikotGymEnv(control="pair")
    with pytest.raises(ValueError, match="no agent for seat"):
        MendikotGymEnv(others={1: RandomAgent()})


def test_gym_env_reset_options_set_the_deal_and_dealer_and_warn_on_unknown_keys() -> None:
    env = MendikotGymEnv()
    env.reset(seed=1)
    deal = deal_cards(env.game)[0].tolist()
    first, _ = env.reset(seed=2, options={"deal": deal, "dealer": 3})
    assert deal_cards(env.game)[0].tolist() == deal and int(env.game.dealer[0]) == 3
    again, _ = env.reset(seed=9, options={"deal": deal, "dealer": 3})
    assert np.array_equal(first, again)  # seat 0 leads: nobody acted before the learner
    with pytest.warns(UserWarning, match=r"unknown reset option\(s\) \['dael'\] ignored; known options are") as caught:
        env.reset(options={"dael": deal})
    assert caught[0].filename == __file__
    with pytest.raises(ValueError, match="the deal: seat 0 has 12 cards"):
        env.reset(options={"deal": [deal[0][:-1], *deal[1:]]})


def test_vector_env_reset_options_set_deals_dealers_and_open_cards() -> None:
    envs = MendikotVectorEnv(3, "open")
    envs.reset(seed=0)
    deals = deal_cards(envs.games).tolist()
    same = [deals[0]] * 3
    obs, _ = envs.reset(seed=4, options={"deals": same, "dealers": 3, "open_cards": [0, 0, 13]})
    assert (envs.games.dealer == 3).all() and envs.games.trump.tolist() == [0, 0, 1]
    assert np.array_equal(obs[0], obs[1]) and not np.array_equal(obs[0], obs[2])
    with pytest.warns(UserWarning, match=r"known options are \['deals', 'dealers', 'open_cards'\]"):
        envs.reset(options={"deal": deals[0]})
    with pytest.raises(ValueError, match="the deal of game 2: seat 1 has 12 cards"):
        envs.reset(options={"deals": [deals[0], deals[1], [deals[2][0], deals[2][1][:-1], *deals[2][2:]]]})
    # Errors name the vector env's option keys, and leave its games as they were.
    games = envs.games
    with pytest.raises(ValueError, match=r"dealers must be one seat or 3 seats \(integers\), got \[1, 2\]"):
        envs.reset(seed=7, options={"dealers": [1, 2]})
    with pytest.raises(ValueError, match="open_cards 52 is not in the pack"):
        envs.reset(options={"open_cards": 52})
    assert envs.games is games


def test_vector_env_shapes_autoreset_and_rewards() -> None:
    envs = MendikotVectorEnv(32, "band", others=make("easy", Rules.preset("band"), seed=0))
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, info = envs.reset(seed=3)
    assert obs.shape == (32, envs.single_observation_space.shape[0]) and obs.dtype == np.float32
    assert info["action_mask"].shape == (32, 53)
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(60):
        actions = masked_uniform(info["action_mask"], rng)
        obs, rewards, terminated, truncated, info = envs.step(actions)
        assert envs.observation_space.contains(obs)
        assert not truncated.any()
        assert np.all(rewards[~terminated] == 0)
        assert set(np.unique(rewards[terminated])) <= {-1.0, 1.0}
        if terminated.any():
            assert np.array_equal(info["_final_obs"], terminated)
            assert info["final_obs"].shape == obs.shape
            finished += int(terminated.sum())
        # SAME_STEP: every game has a fresh hand with a legal action right away.
        assert info["action_mask"].any(axis=1).all()
    assert finished >= 32


def test_other_seats_built_for_other_hands_are_refused_at_construction() -> None:
    band_bot, six_seat_bot = make("hard", Rules.preset("band")), make("hard", Rules(n_players=6))
    with pytest.raises(ValueError, match="seat 1 'hard' was built for .*trump: 'band' vs 'cut'"):
        MendikotGymEnv(Rules(), others=band_bot)
    with pytest.raises(ValueError, match="seat 3 'hard' .*n_players: 6 vs 4"):
        MendikotVectorEnv(2, Rules(), others={1: RandomAgent(), 2: make("hard", Rules()), 3: six_seat_bot})
    # Match-level fields do not matter: a standard-rules bot plays the app preset's hands.
    env = MendikotGymEnv(Rules.preset("app"), others=make("hard", Rules()))
    env.reset(seed=0)
    assert env.agents[1].rules == Rules()


def test_vector_env_wants_one_action_per_env() -> None:
    env = MendikotVectorEnv(np.int64(4))  # a numpy count, as a config file gives one
    _, info = env.reset(seed=0)
    for actions in (np.array([0, 1]), np.zeros((2, 2), int)):  # (2, 2) has 4 actions, but not one per env
        with pytest.raises(ValueError, match=rf"one action per env: shape \(4,\), got {re.escape(str(actions.shape))}"):
            env.step(actions)
    legal = masked_uniform(info["action_mask"], np.random.default_rng(0))
    assert env.step(legal[:, None])[1].shape == (4,), "a column of actions, as some policies give, is taken"


@pytest.mark.parametrize("seat", [1.0, True, "1", 4])
def test_the_learner_seat_must_be_an_integer_seat(seat: object) -> None:
    for make_env in (lambda: MendikotGymEnv(seat=seat), lambda: MendikotVectorEnv(2, seat=seat)):
        with pytest.raises(
            ValueError, match=rf"learner seat {re.escape(repr(seat))} is not a seat; seats are integers"
        ):
            make_env()
    assert MendikotGymEnv(seat=np.int64(2)).seats == [2]


def test_an_agent_class_for_the_other_seats_is_refused() -> None:
    with pytest.raises(ValueError, match="the agent for seat 1 must have act.* got <class 'agents.base.RandomAgent'>"):
        MendikotGymEnv(others=RandomAgent)


def test_vector_env_illegal_actions_end_only_their_games() -> None:
    envs = MendikotVectorEnv(4)
    _, info = envs.reset(seed=0)
    actions = masked_uniform(info["action_mask"], np.random.default_rng(1))
    actions[2] = int(np.flatnonzero(~info["action_mask"][2])[0])
    _, rewards, terminated, _, info = envs.step(actions)
    assert terminated[2] and rewards[2] == -1.0 and info["illegal_action"][2]
    assert not terminated[[0, 1, 3]].any()


def test_maskable_ppo_learns_on_the_gym_env() -> None:
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    env = MendikotGymEnv("standard", others=RandomAgent(seed=0))
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, verbose=0)
    model.learn(total_timesteps=128)
    obs, _ = env.reset(seed=9)
    done = False
    while not done:
        action, _ = model.predict(obs, action_masks=get_action_masks(env), deterministic=True)
        assert env.action_masks()[int(action)]
        obs, reward, done, _, info = env.step(int(action))
    assert "result" in info


def test_the_gymnasium_id_makes_both_views_and_trains_by_name() -> None:
    import gymnasium
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_util import make_vec_env

    env = gymnasium.make(GYM_ENV_ID, rules="band", seat=1, others=make("easy", "band"))
    assert isinstance(env.unwrapped, MendikotGymEnv) and env.unwrapped.seats == [1]
    obs, info = env.reset(seed=0)
    assert np.array_equal(env.get_wrapper_attr("action_masks")(), info["action_mask"])
    envs = gymnasium.make_vec(GYM_ENV_ID, num_envs=3, rules="open", reward="points")
    assert isinstance(envs, MendikotVectorEnv) and envs.reset(seed=0)[0].shape == (3, envs.encoder.size)
    # SB3 by id: make_vec_env wraps gymnasium.make; the masks reach MaskablePPO through it.
    vec = make_vec_env(GYM_ENV_ID, n_envs=2, seed=0, env_kwargs={"rules": "standard"})
    model = MaskablePPO("MlpPolicy", vec, n_steps=32, batch_size=32, n_epochs=1, seed=0, verbose=0)
    model.learn(total_timesteps=64)
    masks = get_action_masks(vec)
    action, _ = model.predict(vec.reset(), action_masks=masks, deterministic=True)
    assert masks.shape == (2, 53) and all(masks[i, a] for i, a in enumerate(action))
    assert vec.env_method("render")[0].dtype == np.uint8  # make_vec_env asked for rgb_array
    mendikot_env.registration.register_gymnasium_envs()  # again: a no-op, not a re-registration warning


def test_gym_env_renders_text_and_pictures() -> None:
    with pytest.raises(ValueError, match=r"render_mode 'human' is not allowed; choose None or one of \['ansi', 'rgb"):
        MendikotGymEnv(render_mode="human")
    assert MendikotGymEnv().render() is None
    text_env, picture_env = MendikotGymEnv(render_mode="ansi"), MendikotGymEnv(render_mode="rgb_array")
    assert text_env.render() is None  # before reset
    for env in (text_env, picture_env):
        obs, info = env.reset(seed=0)
        env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert text_env.render().startswith("Mendikot (cut trump, 4 players) | trick ")
    image = picture_env.render()
    assert image.ndim == 3 and image.shape[2] == 3 and image.dtype == np.uint8 and image.std() > 0


def test_others_may_be_given_by_name_and_anything_without_act_is_refused() -> None:
    env = MendikotGymEnv(others="hard", control="team")
    env.reset(seed=0)
    assert env.agents[1] is env.agents[3] and env.agents[1].name == "hard"  # one agent per name
    vector = MendikotVectorEnv(2, others={1: "hard", 2: RandomAgent(), 3: "easy"})
    vector.reset(seed=0)
    assert [getattr(vector.agents[s], "name", None) for s in (1, 3)] == ["hard", "easy"]
    with pytest.raises(ValueError, match="unknown agent 'hrad'; known agents: random, easy, medium, hard"):
        MendikotGymEnv(others="hrad")
    for bad in (5, {1: "hard", 2: None, 3: "hard"}):
        with pytest.raises(ValueError, match="the agent for seat [12] must have act.* or be an agent name"):
            MendikotGymEnv(others=bad)


def test_float_actions_of_the_other_seats_are_refused_not_truncated() -> None:
    class Floating(RandomAgent):
        def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
            return super().act(observations, masks) + 0.7

    env = MendikotGymEnv(seat=3, others=Floating(seed=0))  # seat 0 leads: an other acts at reset
    with pytest.raises(ValueError, match=r"the agent for seat \d returned actions of shape \(1,\) and dtype float64"):
        env.reset(seed=0)


class _Widths(RandomAgent):
    """A random seat agent that notes the observation widths it is given."""

    def __init__(self, reads_history: bool) -> None:
        super().__init__(seed=1)
        self.reads_history = reads_history
        self.widths: set[int] = set()

    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        self.widths.add(observations.shape[1])
        return super().act(observations, masks)


def test_seat_agents_that_read_the_history_get_it_and_the_learner_keeps_the_plain_observation() -> None:
    reader, plain = _Widths(True), _Widths(False)
    env = MendikotGymEnv(rules="band", others={1: reader, 2: plain, 3: reader})
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = terminated or truncated
        assert obs.shape == (864,)
    assert reader.widths == {864 + 105} and plain.widths == {864}
