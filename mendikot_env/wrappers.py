"""Gymnasium views of Mendikot for single-agent RL libraries.

* :class:`MendikotGymEnv`: a ``gymnasium.Env`` where one seat (or one team) learns and the
  other seats are played by given agents. The legal-action mask is exposed the way
  sb3-contrib's MaskablePPO expects (``env.action_masks()``) and in ``info["action_mask"]``.
* :class:`MendikotVectorEnv`: a batched ``gymnasium.vector.VectorEnv`` over the core (one
  numpy batch, no sub-env objects), autoreset mode ``SAME_STEP``.

An illegal action from the learner ends its episode with reward -1 and
``info["illegal_action"] = True`` (the PettingZoo TerminateIllegalWrapper convention),
so random-action checkers and unmasked learners never crash the env.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from agents.base import Agent, RandomAgent, actions_fault, check_plays, seed_agent

from . import core
from .cards import NUM_ACTIONS, action_index, unpack_sets
from .checks import check_choice, is_integer
from .match import team_rewards
from .observation import ObservationEncoder, reads_history
from .render import render_text
from .reset_options import deal_for_reset
from .rules import Rules, resolve_rules
from .seeding import check_seed, derived_seed

ILLEGAL_REWARD = -1.0
REWARD_MODES = ("win", "points")  # +1/-1/0 per hand, or the scoring tariff's points
CONTROLS = ("seat", "team")  # the learner plays one seat, or every seat of its team


def _seat_agents(
    rules: Rules, learner_seats: list[int], others: Agent | str | Mapping[int, Agent | str] | None
) -> dict[int, Agent]:
    """Agent per non-learner seat: one agent for all of them, or a mapping seat -> agent. An
    agent may be given by what ``agents.load`` takes (a name such as ``"hard"``, a run folder
    or a file); the same name or path for several seats is one agent."""
    free = [s for s in range(rules.n_players) if s not in learner_seats]
    if others is None:
        others = RandomAgent()
    if isinstance(others, Mapping):
        missing = [s for s in free if s not in others]
        if missing:
            raise ValueError(f"others has no agent for seat(s) {missing}; seats not learning are {free}")
        chosen = {s: others[s] for s in free}
    else:
        chosen = {s: others for s in free}
    loaded: dict[str, Agent] = {}
    for seat, agent in chosen.items():
        if isinstance(agent, str):
            from agents.registry import load  # here: it registers loaders that import torch

            if agent not in loaded:
                loaded[agent] = load(agent, rules)
            agent = chosen[seat] = loaded[agent]
        if isinstance(agent, type) or not callable(getattr(agent, "act", None)):  # a class: act needs self
            raise ValueError(
                f"the agent for seat {seat} must have act(observations, masks) or be an agent name, run folder "
                f"or file (as agents.load takes), got {agent!r}"
            )
        check_plays(agent, rules, f"the agent for seat {seat}")
    return chosen


def _learner_seats(rules: Rules, seat: int, control: str) -> list[int]:
    """The seats the learner plays; a float seat (1.0 is ``in range(4)``) or a bool would
    pass a range test and fail when the hand ends."""
    if not is_integer(seat) or seat not in range(rules.n_players):
        raise ValueError(f"learner seat {seat!r} is not a seat; seats are integers 0..{rules.n_players - 1}")
    check_choice("control", control, CONTROLS)
    return [int(seat)] if control == "seat" else list(range(seat % 2, rules.n_players, 2))


def _set_up_learner(
    view: MendikotGymEnv | MendikotVectorEnv,
    rules: Rules | str | dict[str, Any] | None,
    rule_fields: dict[str, Any],
    options: tuple[str, ...],
    others: Agent | str | Mapping[int, Agent | str] | None,
    seat: int,
    control: str,
    reward: str,
) -> None:
    """Check and set what both views share: rules, learner seats, the other seats' agents, the
    encoder. ``options`` are the view's own keywords, named in the error for a misspelt one."""
    view.rules = resolve_rules(rules, other_options=options, **rule_fields)
    check_choice("reward", reward, REWARD_MODES)
    view.reward_mode = reward
    view.seats = _learner_seats(view.rules, seat, control)
    view.agents = _seat_agents(view.rules, view.seats, others)
    view._learner = np.isin(np.arange(view.rules.n_players), view.seats)
    view.encoder = ObservationEncoder(view.rules)
    # The seat agents' observations: with history if one reads it (the others read the prefix).
    history = any(reads_history(agent) for agent in view.agents.values())
    view._others_encoder = ObservationEncoder(view.rules, history=history) if history else view.encoder
    view._rng = np.random.default_rng()


def play_others(state: core.State, encoder: ObservationEncoder, agents: dict[int, Agent], learner: np.ndarray) -> None:
    """Let the seat agents act (batched) until each game is over or at a learner's turn.

    Args:
        state: the batch, advanced in place.
        encoder: builds each acting seat's observation (agents never see the state).
        agents: agent of each non-learner seat.
        learner: (n,) bool, True for the seats the learner plays.
    """
    while True:
        waiting = (state.phase != core.OVER) & ~learner[state.current]
        if not np.count_nonzero(waiting):
            return
        observations = encoder.encode(state, np.maximum(state.current, 0))
        masks = unpack_sets(core.legal_bits(state), NUM_ACTIONS)
        actions = np.zeros(state.batch_size, dtype=np.int64)
        for seat, agent in agents.items():
            games = np.flatnonzero(waiting & (state.current == seat))
            if games.size:
                chosen = np.asarray(agent.act(encoder.for_agent(observations[games], agent), masks[games]))
                if fault := actions_fault(chosen, games.size):
                    raise ValueError(f"the agent for seat {seat} {fault}")
                actions[games] = chosen
        core.step(state, actions, active=waiting)


def _seed_agents(agents: dict[int, Agent], seed: int | None) -> None:
    """Seed each distinct seat agent from the env's seed (seed + 1, + 2, ...); None leaves them."""
    if seed is not None:
        for offset, agent in enumerate(dict.fromkeys(agents.values())):
            seed_agent(agent, derived_seed(seed + 1 + offset))


class MendikotGymEnv(gymnasium.Env):
    """One learner (a seat or a team) against agents on the other seats.

    Args:
        rules: a Rules, preset name or dict (None: standard game); ``**rule_fields`` override.
        others: the agent for every other seat, or a mapping seat -> agent (default random);
            an agent may be a name, run folder or file, as ``agents.load`` takes (``"hard"``).
        seat: the learner's seat.
        control: ``"seat"`` (the learner plays one seat; its partner is one of ``others``)
            or ``"team"`` (the learner plays both/all seats of its team).
        reward: ``"win"`` (+1/-1/0) or ``"points"`` (the scoring tariff).

    Example:
        >>> env = MendikotGymEnv("band")
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, info["action_mask"].shape
        ((864,), (53,))
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 1}

    def __init__(
        self,
        rules: Rules | str | dict[str, Any] | None = None,
        others: Agent | str | Mapping[int, Agent | str] | None = None,
        seat: int = 0,
        control: str = "seat",
        reward: str = "win",
        render_mode: str | None = None,
        **rule_fields: Any,
    ) -> None:
        check_choice("render_mode", render_mode, self.metadata["render_modes"], none_ok=True)
        self.render_mode = render_mode
        options = ("others", "seat", "control", "reward", "render_mode")
        _set_up_learner(self, rules, rule_fields, options, others, seat, control, reward)
        self.observation_space = spaces.Box(0.0, 1.0, (self.encoder.size,), dtype=np.float32)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.game: core.State | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        seed = check_seed(seed)  # a Python int: gymnasium refuses numpy's, and seed + 1 must not wrap
        rng = self._rng if seed is None else np.random.default_rng(seed)
        game = deal_for_reset(self.rules, rng, options)  # first: a bad option leaves the env as it was
        super().reset(seed=seed)
        self._rng, self.game = rng, game
        _seed_agents(self.agents, seed)
        play_others(self.game, self._others_encoder, self.agents, self._learner)
        return self._observation(), {"action_mask": self.action_masks()}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self.game is None or self.game.phase[0] == core.OVER:
            raise RuntimeError("call reset() before step()" if self.game is None else "the hand is over; call reset()")
        value = action_index(action)
        if value is None:  # a float or a bool is a caller's bug, not a move to penalise
            raise ValueError(f"action must be an integer 0..{NUM_ACTIONS - 1}, got {action!r}")
        action = value
        if not (0 <= action < NUM_ACTIONS and self.action_masks()[action]):
            self.game.phase[0] = core.OVER
            self.game.current[0] = core.NO_SEAT
            info = {"action_mask": self.action_masks(), "illegal_action": True}
            return self._observation(), ILLEGAL_REWARD, True, False, info
        core.step(self.game, np.array([action]), check=False)
        play_others(self.game, self._others_encoder, self.agents, self._learner)
        info: dict[str, Any] = {"action_mask": self.action_masks()}
        reward = 0.0
        terminated = bool(self.game.phase[0] == core.OVER)
        if terminated:
            results = core.hand_results(self.game)
            reward = float(team_rewards(self.rules, results, self.reward_mode)[0, self.seats[0] % 2])
            info["result"] = results.as_dict(0)
        return self._observation(), reward, terminated, False, info

    def action_masks(self) -> np.ndarray:
        """(53,) bool legal actions of the learner (all False once the hand is over)."""
        return unpack_sets(core.legal_bits(self.game), NUM_ACTIONS)[0].astype(bool)

    def _observation(self) -> np.ndarray:
        seat = int(self.game.current[0]) if self.game.phase[0] != core.OVER else self.seats[0]
        return self.encoder.encode(self.game, np.array([seat]))[0]

    def render(self) -> str | np.ndarray | None:
        """The table as text (``"ansi"``) or an (H, W, 3) uint8 picture (``"rgb_array"``, what
        SB3's ``make_vec_env`` asks for and video recorders save); every hand is shown."""
        if self.render_mode is None or self.game is None:
            return None
        if self.render_mode == "rgb_array":
            from .picture import table_image  # numpy only; imported here to keep the import light

            return table_image(self.game, 0)
        return render_text(self.game, 0)


class MendikotVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` games on one batched core; the learner plays one seat (or team) in each.

    Finished games reset in the same step (``AutoresetMode.SAME_STEP``): the returned
    observation is the new hand's, and ``info["final_obs"]`` / ``info["_final_obs"]``
    hold the last observation of the finished ones; ``info["action_mask"]`` is (N, 53).
    ``reset(options=...)`` takes ``deals`` (one per game), ``dealers`` and ``open_cards``
    (one for all games or one per game), as ``core.new_hands`` does; later hands are dealt
    from the seed.

    Example:
        >>> envs = MendikotVectorEnv(64, "standard")
        >>> obs, info = envs.reset(seed=0)
        >>> obs.shape
        (64, 864)
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        rules: Rules | str | dict[str, Any] | None = None,
        others: Agent | str | Mapping[int, Agent | str] | None = None,
        seat: int = 0,
        control: str = "seat",
        reward: str = "win",
        **rule_fields: Any,
    ) -> None:
        if not is_integer(num_envs) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.num_envs = num_envs = int(num_envs)
        options = ("others", "seat", "control", "reward")  # no render_mode: a vector env draws nothing
        _set_up_learner(self, rules, rule_fields, options, others, seat, control, reward)
        self.single_observation_space = spaces.Box(0.0, 1.0, (self.encoder.size,), dtype=np.float32)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.games: core.State | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        seed = check_seed(seed)  # a Python int: gymnasium refuses numpy's, and seed + 1 must not wrap
        rng = self._rng if seed is None else np.random.default_rng(seed)
        games = deal_for_reset(self.rules, rng, options, self.num_envs)  # first, as MendikotGymEnv
        self._rng, self.games = rng, games
        _seed_agents(self.agents, seed)
        play_others(self.games, self._others_encoder, self.agents, self._learner)
        return self._observations(), {"action_mask": self._masks()}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        if self.games is None:
            raise RuntimeError("call reset() before step()")
        actions = self._checked_actions(actions)
        in_range = (actions >= 0) & (actions < NUM_ACTIONS)
        legal = (core.legal_bits(self.games) >> np.where(in_range, actions, 0).astype(np.uint64)) & np.uint64(1)
        illegal = ~in_range | (legal == 0)
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        if np.count_nonzero(illegal):
            rewards[illegal] = ILLEGAL_REWARD
            self.games.phase[illegal] = core.OVER
            self.games.current[illegal] = core.NO_SEAT
        core.step(self.games, np.where(illegal, 0, actions), check=False, active=~illegal)
        play_others(self.games, self._others_encoder, self.agents, self._learner)
        terminated = self.games.phase == core.OVER
        infos: dict[str, Any] = {}
        if np.count_nonzero(terminated):
            done = np.flatnonzero(terminated)
            results = core.hand_results(self.games)
            team = self.seats[0] % 2
            finished = terminated & ~illegal
            rewards[finished] = team_rewards(self.rules, results, self.reward_mode)[finished, team]
            infos["final_obs"] = self._observations()
            infos["_final_obs"] = terminated.copy()
            infos["illegal_action"] = illegal
            infos["winner"] = np.where(finished, results.winner, -2)
            fresh = core.new_hands(self.rules, done.size, self._rng)
            self.games.put(done, fresh)
            play_others(self.games, self._others_encoder, self.agents, self._learner)
        infos["action_mask"] = self._masks()
        return self._observations(), rewards, terminated, np.zeros(self.num_envs, dtype=bool), infos

    def _checked_actions(self, actions: Any) -> np.ndarray:
        """(num_envs,) int64 actions; integers out of range or illegal are the learner's moves to
        penalise, but floats (astype would quietly turn 18.7 into card 18) and a wrong shape ((2, 2)
        for 4 envs is a mix-up) are a caller's bug."""
        actions = np.asarray(actions)
        if actions.dtype.kind not in "iu":
            problem = f"actions must be integers 0..{NUM_ACTIONS - 1}, got dtype {actions.dtype}: {actions!r}"
        elif actions.shape not in ((self.num_envs,), (self.num_envs, 1)):
            problem = f"step needs one action per env: shape ({self.num_envs},), got {actions.shape}"
        else:
            return actions.reshape(self.num_envs).astype(np.int64)
        raise ValueError(problem)

    def _masks(self) -> np.ndarray:
        return unpack_sets(core.legal_bits(self.games), NUM_ACTIONS).astype(bool)

    def _observations(self) -> np.ndarray:
        seats = np.where(self.games.phase == core.OVER, self.seats[0], self.games.current)
        return self.encoder.encode(self.games, seats)
