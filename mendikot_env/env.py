"""# Mendikot

| Import               | `from mendikot_env import mendikot_v0` (or `mendikot_env.env(...)`) |
|----------------------|----------------------------------------------------------------------|
| Actions              | Discrete                                                             |
| Parallel API         | No                                                                   |
| Manual Control       | `mendikot play` (terminal)                                           |
| Agents               | `agents = ['player_0', 'player_1', 'player_2', 'player_3']` (6 or 8 with `n_players`) |
| Agents               | 4, 6 or 8                                                            |
| Action Shape         | Discrete(53)                                                         |
| Action Values        | 0..51 play a card, 52 ask for the hidden trump                       |
| Observation Shape    | Dict(observation: (864,) float32 for four players, action_mask: (53,) int8) |
| Observation Values   | [0, 1]                                                               |

Mendikot is the Indian partnership trick-taking game of tens: two teams (seats 0, 2, ...
against seats 1, 3, ...) play every trick of a hand and the team that takes three or
four of the four tens wins it; at two tens each, the team with more tricks wins. Trump
is set by a cut (the first card that fails to follow suit), by a hidden face-down card
(band hukum, revealed on request or automatically) or by an open draw. The full rules
and every variant are in RULES.md; all of them are fields of `mendikot_env.Rules`.

Agents `player_k` are seats in the order of play: `player_{k+1}` plays after
`player_k`, and seat `k` is on team `k % 2`. The env runs on the batched numpy core
(`mendikot_env.core`) with a batch of one; the agents, the arena and training run the
same core on thousands of games. A wrapped step with its observation takes about 45
microseconds on one core of a 2-core VM, about a fifth less than PettingZoo's `connect_four_v3`
in the same loop (`mendikot bench` measures both); for throughput use `MendikotVectorEnv`
or the core itself.

`env()` is `raw_env()` in PettingZoo's classic wrappers (TerminateIllegalWrapper, then
AssertOutOfBoundsWrapper, then OrderEnforcingWrapper). They are subclassed in
`mendikot_env.aec_wrappers` for one thing only: `agents`, `agent_selection`, `rewards`,
`terminations`, `truncations`, `infos` and `_cumulative_rewards` are read from and
written to the raw env directly, not through each layer's `__getattr__`, which takes a
fifth off a wrapped step's time. Each layer is still an instance of PettingZoo's class
and behaves as it does.

## Arguments

``` python
mendikot_env.env(rules=None, render_mode=None, reward="win", episode="hand",
                 render_seat=None, history=False, **rule_fields)
```

`rules`: a `Rules`, a preset name (`"standard"`, `"band"`, `"band_auto"`, `"open"`,
`"app"`, `"dehla_pakad"`) or None for the standard game; `**rule_fields` override fields,
e.g. `env(trump="band", n_players=6)`.

`render_mode`: `"ansi"` (returns the table as text), `"human"` (prints it every step) or
`"rgb_array"` (returns the table drawn as cards, an (H, W, 3) uint8 image for video
recorders; `mendikot_env.picture` also draws it as SVG for notebooks).

`reward`: `"win"` (+1 to each winner, -1 to each loser, 0 for a drawn hand) or
`"points"` (the scoring tariff: 1, or 2 for a mendikot and 3 for a whitewash under
`scoring="tiered"`; losers get the negative).

`episode`: `"hand"` (one hand per episode) or `"match"` (hands to the target with the
rules' dealer rotation and scoring; rewards after each hand).

`render_seat`: show only this seat's hand in renders (a player's view); None shows
every hand (debug view).

`history`: True appends the public move history to every observation (the pieces
`play_order`, `reveal_at` and `revealed_card` below; 105 more floats). False (the default) leaves the
observation as the table below ends, so networks trained on it read it unchanged.

A misspelt option (`env(rendermode="ansi")`) is a ValueError listing the Rules fields and
the env's own options; a bad value names the option and what it may be.

## Observation Space

The observation is a dict with `observation` and `action_mask`. `observation` is a flat
float32 vector relative to the observing seat (relative seat 0 = me, 1 = next to play,
...), built from named pieces in this order (n seats, T tricks per hand):

| piece          | shape    | meaning                                                           |
|----------------|----------|-------------------------------------------------------------------|
| `hand`         | (52,)    | cards in my hand (card id = 13 * suit + rank, suits C D H S)       |
| `face_down`    | (52,)    | my face-down band card (the hider only, while it is face down)    |
| `open_card`    | (52,)    | the card shown by the open draw                                   |
| `known`        | (52,)    | the revealed band card while it is back in the hider's hand       |
| `take_lead`    | (52,)    | my legal cards that would win the trick so far (when I act)       |
| `unseen`       | (52,)    | cards whose place I do not know (not mine, not played, not known) |
| `masters`      | (52,)    | my cards that no card outside my hand and the played ones outranks |
| `trick`        | (n, 52)  | card each relative seat played to the current trick               |
| `played`       | (n, 52)  | cards each relative seat has played this hand                     |
| `voids`        | (n, 4)   | suits each relative seat has failed to follow this hand           |
| `winning`      | (n,)     | relative seat winning the current trick so far                    |
| `trick_tens`   | (1,)     | tens in the current trick / 4                                     |
| `led_suit`     | (4,)     | suit led to the current trick                                     |
| `trump_state`  | (3,)     | none yet / face down (band) / known                               |
| `trump_suit`   | (4,)     | the public trump suit                                             |
| `asked`        | (1,)     | the band card was revealed by asking                              |
| `hider`        | (n,)     | relative seat that hid the band card                              |
| `revealed_by`  | (n,)     | relative seat whose turn revealed it (the asker)                  |
| `leader`       | (n,)     | relative seat that led the current trick                          |
| `dealer`       | (n,)     | relative seat of the dealer                                       |
| `tens`         | (2, 5)   | one-hot tens taken (0..4): my team, their team                    |
| `tricks`       | (2,)     | tricks taken / T: my team, their team                             |
| `middle`       | (2,)     | Dehla Pakad middle pile: tens / 4, tricks / T                     |
| `run_holder`   | (n,)     | relative seat that won the previous trick                         |
| `trick_number` | (T,)     | one-hot index of the current trick                                |
| `phase`        | (2,)     | choosing the band card / playing                                  |
| `match_score`  | (2,)     | match points / target (capped at 1): my team, their team          |

With `history=True` three pieces follow (P = n T, the cards played in a hand):

| piece          | shape    | meaning                                                           |
|----------------|----------|-------------------------------------------------------------------|
| `play_order`   | (52,)    | (place of the card in the hand's play order + 1) / P; 0 unplayed  |
| `reveal_at`    | (1,)     | (cards played before the band card's reveal + 1) / P; 0 none      |
| `revealed_card`| (52,)    | the band card once turned up (kept after it is played)            |

With `played`, which says who played each card, and `asked` and `revealed_by`, they are the
whole public history: the sequence of (seat, card), where the ask or reveal came and the
card it showed. `mendikot_env.observation.read_history(rules, obs["observation"])` decodes
it into that sequence (relative seats), the reveal's place in it and the band card.

Size = 52 (7 + 2n) + 10n + T + 31: 864 for four players, 1087 for six, 1313 for eight
(105 more with `history=True`). Named views:
`env.unwrapped.observation_layout.view(obs["observation"], "hand")` or
`.split(obs["observation"])`.
Nothing a seat may not know is in its observation: other hands and another seat's
face-down card never appear (tested by changing hidden cards).

`env.state()` is a perfect-information tensor for centralised critics and oracle
agents: every hand, the face-down card, the acting seat, then seat 0's public view
(`env.unwrapped.state_space`: a float32 Box in [0, 1]; `state_layout` names its pieces).

## Legal Actions Mask

`action_mask` is an int8 (53,) vector, 1 for a legal action of the agent to act and all
zeros for every other agent (and for everybody once the hand is over). Follow suit if you
can, otherwise any card; a player who cannot follow while the band card is face down
may ask (52); after asking they must play a trump if able. In band hukum the first action
of a hand is the first player choosing a card of their hand to lay face down.

## Action Space

Discrete(53): card ids 0..51 (`13 * suit + rank`; the A of spades is 51) and 52 = ask
for the hidden trump (band hukum). Asking does not end the turn: the same agent acts again.

## Rewards

| Winner | Loser | Drawn hand (6 or 8 players) |
|:------:|:-----:|:---------------------------:|
| +1     | -1    | 0                           |

Rewards are given at the end of each hand (0 on every other step); `env.rewards` holds
only the last step's rewards. Every agent stays in `env.agents` until it is stepped with
None at the end, so each collects its final reward through `last()`. With
`reward="points"` the winners get the scoring tariff. At the end of a hand every agent's
`info["result"]` (and `env.unwrapped.result`) is the hand result: `tens`, `tricks`,
`winner` (0, 1 or None), `mendikot`, `whitewash`, `next_dealer`, `trump`,
`trick_winners`. In match episodes `info["match"]` holds the scores, the deals played,
whether the match is over and its winner; the latest hand's result stays in the infos
until the next hand ends.

An illegal action: the wrapped env (`env()`) ends the episode with -1 to the offender and
0 to everyone else on that step (PettingZoo's TerminateIllegalWrapper: every agent is
terminated and truncated, every mask is all zeros, and no result is made for the hand cut
short). The infos and `env.unwrapped.result` are left as they were: empty and None in a
hand episode and in a match's first hand; later in a match, the last finished hand's
result and its `match` summary, which still says `over: False` because the match was cut
short, not decided. The other agents still collect that hand's rewards through `last()`
if they had not yet; the offender's are replaced by the -1. Every reward is a float. The
raw env (`raw_env()`) raises a ValueError naming the action and the legal ones. Before its
first `reset()`, its `step()`, `observe()`, `last()`, `state()` and `render()` raise an
AttributeError that says to call `reset()` (the wrapped env's OrderEnforcingWrapper
refuses them too). After the episode (every agent gone from `env.agents`), `last()` and
the raw env's `step()` raise a RuntimeError that says to call `reset()`; the wrapped env's
`step()` warns and does nothing, as PettingZoo's do. Warnings point at the caller's line,
not inside the wrappers.

Actions are integers. The raw env also takes a numpy integer, a one-element integer array
or a torch tensor, and refuses a float or a bool with that ValueError. The wrapped env's
AssertOutOfBoundsWrapper stops with an AssertionError what `Discrete(53)` does not contain
(floats, one-element arrays, tensors); a bool passes it (an int to Gymnasium) and then
fails inside PettingZoo's TerminateIllegalWrapper with a numpy ValueError.

## Reset options

`reset(seed=..., options={"deal": [[...], ...], "dealer": d, "open_card": c})`: every
option is optional; without them the cards come from the seed, and the same options
replay the same deal (duplicate evaluation). `deal` is one list of cards per seat, as
card ids or as text (`"TS"` as records write them, or `"10♠"`), one or the other in a
deal, not a mix; `dealer` a seat; `open_card` the open draw's card (`trump="open"`). In
match episodes they set the first hand. Unknown option keys give a warning naming the
known ones. A malformed deal (wrong counts, duplicates, a 2 with 6 or 8 players, a card id
out of range) or another bad option raises a ValueError that says what is wrong (the
counts of hands and cards, or the seat and card), and the env stays as it was, its seed
too.

## Checks and copies

The env passes PettingZoo's `api_test`, `seed_test`, `render_test` and `state_test`, and
pickles mid-hand. Each agent's info holds its own copy of the result, and each agent has
its own observation and action space objects (seeding one leaves the others alone).

## Version History

* v0: initial release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from . import aec_wrappers, core
from .cards import NUM_ACTIONS, action_index, is_integer, set_to_cards, unpack_sets
from .match import MatchState, team_rewards
from .observation import ObservationEncoder, encode_state, state_layout
from .render import render_text
from .reset_options import deal_for_reset, warn_caller
from .rules import Rules, resolve_rules
from .seeding import make_rng

REWARD_MODES = ("win", "points")
EPISODE_MODES = ("hand", "match")


def env(rules: Rules | str | dict[str, Any] | None = None, **kwargs: Any) -> AECEnv:
    """The Mendikot AEC env in PettingZoo's classic wrappers (see ``mendikot_env.aec_wrappers``).

    Args:
        rules: a Rules, a preset name or a dict of fields (None: the standard game).
        **kwargs: env options (render_mode, reward, episode, render_seat, history) and rule fields.

    Example:
        >>> e = env("band", n_players=6)
        >>> e.reset(seed=0)
        >>> e.agent_selection
        'player_...'
    """
    return aec_wrappers.wrap(raw_env(rules, **kwargs), illegal_reward=-1)


def _before_reset(method: str) -> AttributeError:
    """The error of ``step``, ``observe``, ``last``, ``state`` and ``render`` before the first
    ``reset()``, which sets what they read."""
    return AttributeError(f"raw_env.{method}() before reset(): call reset() first, which deals the hand")


def _after_end(method: str) -> RuntimeError:
    """The error of ``step`` and ``last`` once every agent has stepped its closing ``None``
    and left ``env.agents`` (PettingZoo's own code fails there on a missing key)."""
    return RuntimeError(f"raw_env.{method}() after the episode is over (env.agents is empty): call reset()")


def _options_problem(
    rules: Rules, render_modes: list[str], render_mode: Any, reward: Any, episode: Any, render_seat: Any, history: Any
) -> str:
    """What is wrong with the first of the env's own options that is wrong, or "" when none is."""
    if render_mode is not None and render_mode not in render_modes:
        return f"render_mode {render_mode!r} is not allowed; choose one of {render_modes}"
    if reward not in REWARD_MODES:
        return f"reward {reward!r} is not allowed; choose one of {list(REWARD_MODES)}"
    if episode not in EPISODE_MODES:
        return f"episode {episode!r} is not allowed; choose one of {list(EPISODE_MODES)}"
    n = rules.n_players
    if render_seat is not None and not (is_integer(render_seat) and render_seat in range(n)):
        return f"render_seat {render_seat!r} is not a seat; use None or an integer 0..{n - 1}"
    if not isinstance(history, bool | np.bool_):
        return f"history {history!r} is not allowed; use True or False"
    return ""


class raw_env(AECEnv):  # noqa: N801 (PettingZoo's name for the unwrapped env)
    """The unwrapped Mendikot env; see the module docstring for its documentation."""

    metadata = {
        "name": "mendikot_v0",
        "render_modes": ["human", "ansi", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        rules: Rules | str | dict[str, Any] | None = None,
        render_mode: str | None = None,
        reward: str = "win",
        episode: str = "hand",
        render_seat: int | None = None,
        history: bool = False,
        **rule_fields: Any,
    ) -> None:
        super().__init__()
        options = ("render_mode", "reward", "episode", "render_seat", "history")
        self.rules = resolve_rules(rules, other_options=options, **rule_fields)
        modes = self.metadata["render_modes"]
        if problem := _options_problem(self.rules, modes, render_mode, reward, episode, render_seat, history):
            raise ValueError(problem)
        render_seat = None if render_seat is None else int(render_seat)
        self.render_mode = render_mode
        self.reward_mode = reward
        self.episode = episode
        self.render_seat = render_seat
        self.history = bool(history)
        self.encoder = ObservationEncoder(self.rules, history=self.history)
        self._public_encoder = ObservationEncoder(self.rules)  # env.state()'s public view has no history
        self.observation_layout = self.encoder.layout
        self.state_layout = state_layout(self.rules)
        self.possible_agents = [f"player_{i}" for i in range(self.rules.n_players)]
        self.agent_name_mapping = {agent: i for i, agent in enumerate(self.possible_agents)}
        # One space object per agent, as PettingZoo's classic envs do: seeding or sampling
        # one agent's space leaves the others' random streams alone.
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, 1.0, (self.encoder.size,), dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in self.possible_agents}
        self.state_space = spaces.Box(0.0, 1.0, (self.state_layout.size,), dtype=np.float32)
        self._rng = np.random.default_rng()
        self.game: core.State | None = None
        self.match: MatchState | None = None
        self.result: dict[str, Any] | None = None

    # -- spaces ------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # -- reset -------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        rng = self._rng if seed is None else make_rng(seed)
        game = deal_for_reset(self.rules, rng, options)  # first: a bad option leaves the env as it was
        self._rng = rng
        self._start_hand(game)
        self.match = MatchState.start(self.game.dealer) if self.episode == "match" else None
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: {} for agent in self.agents}
        self.result = None

    def _start_hand(self, game: core.State) -> None:
        self.game = game
        self._after_change()

    def _after_change(self) -> None:
        """Refresh what every call until the next step reads: legal set, selection, cache."""
        legal = core.legal_bits(self.game)
        self._legal = legal.item(0)
        self._mask = unpack_sets(legal, NUM_ACTIONS)[0].view(np.int8)
        self._observations: dict[int, np.ndarray] = {}
        self._current = self.game.current.item(0)
        if self._current >= 0:
            self.agent_selection = self.possible_agents[self._current]

    # -- observe -----------------------------------------------------------------------

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.agent_name_mapping[agent]
        try:  # free when nothing is raised; a class __getattr__ would slow every lookup instead
            vector = self._observations.get(seat)
        except AttributeError:
            raise _before_reset("observe") from None
        if vector is None:
            score = None if self.match is None else self.match.scores
            vector = self.encoder.encode_one(self.game, seat, score, self._legal)
            self._observations[seat] = vector
        return {"observation": vector.copy(), "action_mask": self.action_mask(agent)}

    def action_mask(self, agent: str | None = None) -> np.ndarray:
        """(53,) int8 legal actions of ``agent`` (default: the agent to act); zeros if not to act."""
        agent = self.agent_selection if agent is None else agent
        # terminations: TerminateIllegalWrapper ends the episode without the core's knowing.
        if self.agent_name_mapping[agent] != self._current or self.terminations.get(agent, True):
            return np.zeros(NUM_ACTIONS, dtype=np.int8)
        return self._mask.copy()

    def state(self) -> np.ndarray:
        if self.game is None:
            raise _before_reset("state")
        score = None if self.match is None else self.match.scores
        return encode_state(self.game, self._public_encoder, score)[0]

    # -- step --------------------------------------------------------------------------

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``last()``, with the before-reset error of :meth:`step`."""
        try:
            agent = self.agent_selection
        except AttributeError:
            raise _before_reset("last") from None
        try:
            reward, terminated = self._cumulative_rewards[agent], self.terminations[agent]
        except KeyError:
            raise _after_end("last") from None
        observation = self.observe(agent) if observe else None
        return observation, reward, terminated, self.truncations[agent], self.infos[agent]

    def step(self, action: Any) -> None:
        try:  # free when nothing is raised
            agent = self.agent_selection
        except AttributeError:
            raise _before_reset("step") from None
        try:
            over = self.terminations[agent] or self.truncations[agent]
        except KeyError:
            raise _after_end("step") from None
        if over:
            self._was_dead_step(action)
            return
        action = self._checked_action(action)
        core.step(self.game, np.array([action]), check=False)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if self.game.phase.item(0) == core.OVER:
            self._finish_hand(agent)
            self._accumulate_rewards()  # rewards are all 0 on every other step
        self._after_change()
        if self.render_mode == "human":
            self.render()

    def _accumulate_rewards(self) -> None:
        """PettingZoo's, with every reward made a float first: TerminateIllegalWrapper sets the
        others' rewards for an illegal move to the int 0 and then calls this, and libraries
        that build arrays or check types from ``env.rewards`` expect floats on every step."""
        self.rewards = {agent: float(reward) for agent, reward in self.rewards.items()}
        super()._accumulate_rewards()

    def _clear_rewards(self) -> None:
        """PettingZoo's sets the int 0 after each closing ``None`` step; a float keeps
        ``env.rewards`` one type on every step."""
        self.rewards = dict.fromkeys(self.rewards, 0.0)

    def _checked_action(self, action: Any) -> int:
        value = action_index(action)
        if value is None or not 0 <= value < NUM_ACTIONS or not self._legal >> value & 1:
            legal = set_to_cards(self._legal)
            raise ValueError(
                f"illegal action {action!r} for {self.agent_selection}; actions are integers 0..{NUM_ACTIONS - 1}"
                f" and the legal ones now are {legal}"
            )
        return value

    def _finish_hand(self, last_agent: str) -> None:
        results = core.hand_results(self.game)
        self.result = results.as_dict(0)
        team_reward = team_rewards(self.rules, results, self.reward_mode)[0]
        for agent in self.agents:
            self.rewards[agent] = float(team_reward[self.agent_name_mapping[agent] % 2])
        # Every agent's info gets its own copy (as_dict builds new lists): a caller editing
        # one changes no other, nor env.unwrapped.result.
        if self.match is None:
            self.infos = {agent: {"result": results.as_dict(0)} for agent in self.agents}
            self._end_episode(last_agent)
            return
        self.match.record(self.rules, results)
        self.infos = {agent: {"result": results.as_dict(0), "match": self._match_summary()} for agent in self.agents}
        if self.match.over[0]:
            self._end_episode(last_agent)
        else:
            self._start_hand(core.new_hand(self.rules, self._rng, dealer=self.match.dealer))

    def _match_summary(self) -> dict[str, Any]:
        """The match so far, for the infos: scores, deals played, over, winner (None if not over)."""
        over = bool(self.match.over[0])
        winner = int(self.match.winner()[0])
        return {
            "scores": [int(x) for x in self.match.scores[0]],
            "deals": int(self.match.deals[0]),
            "over": over,
            "winner": None if not over or winner < 0 else winner,
        }

    def _end_episode(self, last_agent: str) -> None:
        self.terminations = {agent: True for agent in self.agents}
        nxt = (self.agent_name_mapping[last_agent] + 1) % self.rules.n_players
        self.agent_selection = self.possible_agents[nxt]

    # -- render ------------------------------------------------------------------------

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            warn_caller("render() called without a render_mode; use render_mode='ansi', 'human' or 'rgb_array'")
            return None
        if self.game is None:
            raise _before_reset("render")
        score = None if self.match is None else [int(x) for x in self.match.scores[0]]
        if self.render_mode == "rgb_array":
            from .picture import table_image  # numpy only; imported here to keep env import light

            return table_image(self.game, 0, seat=self.render_seat, match_score=score)
        text = render_text(self.game, 0, seat=self.render_seat, match_score=score)
        if self.result is not None and self.game.phase[0] == core.OVER:
            r = self.result
            outcome = "drawn hand" if r["winner"] is None else f"team {r['winner']} wins"
            extras = [k for k in ("mendikot", "whitewash") if r[k]]
            text += f"\nResult: {outcome} (tens {r['tens']}, tricks {r['tricks']})" + (
                f" - {', '.join(extras)}" if extras else ""
            )
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        pass
