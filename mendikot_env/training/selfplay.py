"""Self-play experience on the batched core: every decision of the learner is a sample.

:func:`collect_hands` deals B hands and plays them to the end, as a :class:`CollectConfig`
says. In each game every seat is played either by the learner (the network being trained,
shared by all its seats) or by an opponent (a frozen snapshot or a rule-based agent) on
one team, so a share of the games is played against the opponent pool. Only the learner's decisions are kept.

Rewards arrive at the end of the hand; :func:`seat_gae` turns them into advantages along
each seat's own decisions (a seat's next decision is the "next state" of its previous
one), with one backward pass over the steps and no loop over games.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .. import core
from ..cards import NUM_ACTIONS, popcount, unpack_sets
from ..match import team_rewards
from ..observation import ObservationEncoder, hidden_planes, reads_history
from ..rules import Rules

LEARNER = 0  # seat_player value of the learner; opponents are 1, 2, ...

# policy(observations, masks) -> (actions, log-probabilities, values), all (N,) arrays; with a
# centralised critic it is called as policy(observations, masks, hidden_cards) (see ``CollectConfig``).
Policy = Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray]]


@dataclass
class Samples:
    """The learner's decisions of one collection, flat over (step, game)."""

    observations: np.ndarray  # (N, D) float32; D + 53 with an advisor (the network input)
    masks: np.ndarray  # (N, 53) bool
    actions: np.ndarray  # (N,) int64
    log_probs: np.ndarray  # (N,) float32: log-probability under the acting policy
    values: np.ndarray  # (N,) float32: value estimate at the decision
    advantages: np.ndarray  # (N,) float32: GAE along the seat's decisions
    returns: np.ndarray  # (N,) float32: advantages + values (value target)
    outcomes: np.ndarray  # (N,) float32: Monte-Carlo return from the decision (shaping + hand result)
    hidden_cards: np.ndarray | None = None  # (N, (n + 1) * 52) float32: for a centralised critic only

    def __len__(self) -> int:
        return int(self.actions.shape[0])


@dataclass
class CollectStats:
    """What a collection did and where its time went."""

    hands: int = 0
    decisions: int = 0  # learner decisions kept as samples
    forced: int = 0  # learner decisions with one legal action, played without a sample (skip_forced)
    all_decisions: int = 0  # every seat's decisions, opponents included
    seconds_core: float = 0.0
    seconds_encoder: float = 0.0
    seconds_network: float = 0.0
    seconds_opponents: float = 0.0
    seconds_total: float = 0.0
    learner_wins: float = 0.0  # hands won by the learner's team in games against the pool (share)
    pool_hands: int = 0
    extra: dict[str, float] = field(default_factory=dict)


def assign_players(
    n_games: int,
    n_players: int,
    opponent_weights: np.ndarray,
    pool_share: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """(B, n) who plays each seat: the learner everywhere, except that a ``pool_share`` of
    the games give one random team to an opponent drawn with ``opponent_weights``."""
    n_opponents = len(opponent_weights)
    if n_opponents == 0 or pool_share <= 0:
        return np.full((n_games, n_players), LEARNER, dtype=np.int64)
    against_pool = rng.random(n_games) < pool_share
    opponent = 1 + rng.choice(n_opponents, size=n_games, p=np.asarray(opponent_weights) / np.sum(opponent_weights))
    opponent_team = rng.integers(0, 2, size=n_games)
    on_opponent_team = (np.arange(n_players) % 2)[None, :] == opponent_team[:, None]
    return np.where(against_pool[:, None] & on_opponent_team, opponent[:, None], LEARNER)


@dataclass(frozen=True)
class CollectConfig:
    """How one collection plays and scores its hands (the loop builds one from ``Args``)."""

    games: int
    """hands played at once (B, the batch of the core)"""
    pool_share: float = 0.0
    """share of the games in which one team is an opponent from the pool"""
    gamma: float = 1.0
    """discount along each seat's decisions"""
    gae_lambda: float = 0.95
    """GAE lambda along each seat's decisions"""
    tens_reward: float = 0.0
    """shaping: each ten a team takes gives its seats this reward (and the other team's
    seats minus this) as it happens; 0 leaves only the hand's result"""
    opponent_weights: np.ndarray | None = None
    """how often each opponent is drawn (None: equally often)"""
    duplicate: int = 0
    """the first ``duplicate`` opponents (the bots, and with ``Args.duplicate_snapshots`` the
    snapshots after them) have their games replayed opponent against opponent for the
    duplicate baseline (see :func:`duplicate_baseline`)"""
    centralised: bool = False
    """the policy's values come from a centralised critic: it is given every hand and the
    face-down card of each decision (kept in ``Samples.hidden_cards``)"""
    advise: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
    """turns the learner's observations and masks into its network's input (the advisor's
    move appended, see ``agents.advice.with_advice``); the samples keep that input, and
    opponents always get the plain observations"""
    skip_forced: bool = False
    """a decision with one legal action is played at once, by no network and no bot, and the
    learner keeps no sample of it: it carries no policy gradient (about a fifth of all
    decisions). The seat's next decision with a choice follows its previous one, as in
    :func:`seat_gae`"""


def collect_hands(
    rules: Rules,
    policy: Policy,
    opponents: Sequence[object],
    rng: np.random.Generator,
    encoder: ObservationEncoder,
    config: CollectConfig,
) -> tuple[Samples, CollectStats]:
    """Play ``config.games`` full hands and return the learner's decisions with advantages.

    Args:
        rules: the rule set.
        policy: the learner, batched (see ``Policy``).
        opponents: agents of the pool (``act(observations, masks)``), indexed 1..K.
        rng: generator of the deals and the seat assignment.
        encoder: observation encoder of ``rules``.
        config: how the hands are played and scored (:class:`CollectConfig`).

    Returns:
        The learner's samples and what the collection did (:class:`CollectStats`).
    """
    stats = CollectStats()
    start = t0 = time.perf_counter()
    plain = encoder.size  # the learner's input: the plain observation, or the prefix of one with history
    if not encoder.history and any(reads_history(agent) for agent in opponents):
        encoder = ObservationEncoder(rules, history=True)  # a search in the pool reads the moves seen
    n_games = config.games
    state = core.new_hands(rules, n_games, rng)
    weights = np.ones(len(opponents)) if config.opponent_weights is None else np.asarray(config.opponent_weights, float)
    players = assign_players(n_games, rules.n_players, weights, config.pool_share, rng)
    dealt = state.copy() if config.duplicate else None
    stats.seconds_core += time.perf_counter() - t0
    steps: list[dict[str, np.ndarray]] = []
    shaping: list[np.ndarray] = []  # (B, 2) reward to each team from the state change of each step
    tens_before = np.zeros((n_games, 2), dtype=np.int64)
    while np.count_nonzero(state.phase != core.OVER):
        actions, step = _decide(state, players, policy, opponents, encoder, plain, config, stats)
        if step is not None:
            steps.append({**step, "step": len(shaping)})
        t0 = time.perf_counter()
        core.step(state, actions, check=False)
        gained = np.zeros((n_games, 2), dtype=np.int64)
        if config.tens_reward:
            tens_after, _ = core.team_counts(state)
            gained, tens_before = tens_after - tens_before, tens_after
        shaping.append(config.tens_reward * (gained - gained[:, ::-1]).astype(np.float32))
        stats.seconds_core += time.perf_counter() - t0

    results = core.hand_results(state)
    rewards = team_rewards(rules, results, "win")  # (B, 2)
    if dealt is not None:
        t0 = time.perf_counter()
        rewards -= duplicate_baseline(rules, dealt, players, opponents[: config.duplicate], encoder, config.tens_reward)
        stats.seconds_opponents += time.perf_counter() - t0
    advantages, outcomes = seat_gae(steps, shaping, rewards, n_games, rules.n_players, config.gamma, config.gae_lambda)
    samples = _samples(steps, advantages, outcomes, config.centralised)
    pool = (players != LEARNER).any(axis=1)
    stats.pool_hands = int(np.count_nonzero(pool))
    if stats.pool_hands:
        learner_team = np.argmax(players == LEARNER, axis=1) % 2
        stats.learner_wins = float(np.mean(results.winner[pool] == learner_team[pool]))
    stats.hands = n_games
    stats.decisions = len(samples)
    stats.seconds_total = time.perf_counter() - start
    return samples, stats


def _decide(
    state: core.State,
    players: np.ndarray,
    policy: Policy,
    opponents: Sequence[object],
    encoder: ObservationEncoder,
    plain: int,
    config: CollectConfig,
    stats: CollectStats,
) -> tuple[np.ndarray, dict[str, np.ndarray] | None]:
    """(B,) the action of every game's seat to play (0 where a game is over), and the
    learner's decisions of this step as a sample record (None when it made none); the
    learner reads the first ``plain`` columns of the observations."""
    t0 = time.perf_counter()
    n_games = len(players)
    live = state.phase != core.OVER
    seats = np.maximum(state.current, 0)
    bits = core.legal_bits(state)
    masks = unpack_sets(bits, NUM_ACTIONS).view(bool)
    who = np.where(live, players[np.arange(n_games), seats], -1)
    actions = np.zeros(n_games, dtype=np.int64)
    if config.skip_forced:
        forced = live & (popcount(bits) == 1)
        actions[forced] = masks[forced].argmax(axis=1)
        stats.forced += int(np.count_nonzero(forced & (who == LEARNER)))
        who = np.where(forced, -1, who)
    t1 = time.perf_counter()
    observations = encoder.encode(state, seats, legal=bits)
    mine = np.flatnonzero(who == LEARNER)
    inputs = observations[mine, :plain]  # the learner's network input (advice counts as encoding)
    if config.advise is not None and mine.size:
        inputs = config.advise(inputs, masks[mine])
    t2 = time.perf_counter()
    stats.seconds_core += t1 - t0
    stats.seconds_encoder += t2 - t1
    step = None
    if mine.size:
        hidden_cards = hidden_planes(state, seats)[mine] if config.centralised else None
        extra = () if hidden_cards is None else (hidden_cards,)
        chosen, log_probs, values = policy(inputs, masks[mine], *extra)
        actions[mine] = chosen
        step = {
            "hidden_cards": hidden_cards,
            "games": mine,
            "seats": seats[mine],
            "observations": inputs,
            "masks": masks[mine],
            "actions": chosen,
            "log_probs": log_probs,
            "values": values,
        }
    t3 = time.perf_counter()
    stats.seconds_network += t3 - t2
    for k, agent in enumerate(opponents, start=1):
        theirs = np.flatnonzero(who == k)
        if theirs.size:
            actions[theirs] = agent.act(observations[theirs], masks[theirs])
    stats.seconds_opponents += time.perf_counter() - t3
    stats.all_decisions += int(np.count_nonzero(live))
    return actions, step


def _samples(
    steps: list[dict[str, np.ndarray]], advantages: np.ndarray, outcomes: np.ndarray, centralised: bool
) -> Samples:
    """The learner's step records as one flat batch of samples."""

    def joined(key: str) -> np.ndarray:
        return np.concatenate([s[key] for s in steps])

    values = joined("values").astype(np.float32)
    return Samples(
        observations=joined("observations"),
        masks=joined("masks"),
        actions=joined("actions"),
        log_probs=joined("log_probs").astype(np.float32),
        values=values,
        advantages=advantages,
        returns=advantages + values,
        outcomes=outcomes,
        hidden_cards=joined("hidden_cards") if centralised else None,
    )


def duplicate_baseline(
    rules: Rules,
    dealt: core.State,
    players: np.ndarray,
    bots: Sequence[object],
    encoder: ObservationEncoder,
    tens_reward: float,
) -> np.ndarray:
    """(B, 2) what each team would have scored had the bot played it too, in the games where
    a bot was the opponent (0 elsewhere): every such deal is replayed bot against bot. Any
    agent can be such a "bot" (the loop passes snapshots too with ``duplicate_snapshots``);
    one that samples its moves leaves that noise in the baseline.

    Each team's baseline is its hand result plus the tens shaping it would have collected.
    """
    from ..arena import play_hands  # the arena's batched play of agents

    baseline = np.zeros((players.shape[0], 2))
    opponent = players.max(axis=1)  # the opponent of each game (LEARNER = 0 where none)
    for k, bot in enumerate(bots, start=1):
        games = np.flatnonzero(opponent == k)
        if games.size == 0:
            continue
        replay = dealt.select(games)
        play_hands(replay, [bot], np.zeros((games.size, 2), dtype=np.int64), encoder)
        results = core.hand_results(replay)
        tens, _ = core.team_counts(replay)
        baseline[games] = team_rewards(rules, results, "win") + tens_reward * (tens - tens[:, ::-1])
    return baseline


def seat_gae(
    steps: list[dict[str, np.ndarray]],
    shaping: list[np.ndarray],
    rewards: np.ndarray,
    n_games: int,
    n_players: int,
    gamma: float,
    gae_lambda: float,
) -> tuple[np.ndarray, np.ndarray]:
    """GAE along each (game, seat)'s own decisions, walking the steps backwards.

    A decision's reward is the shaping its team received from that decision until the
    seat's next one, plus, after the seat's last decision, the team's result of the hand.
    ``shaping[t]`` is aligned with the game steps, which include the opponents' steps.

    Returns:
        (advantages, Monte-Carlo returns): flat arrays in the order of ``steps``.
    """
    seat_team = np.arange(n_players) % 2
    next_value = np.zeros((n_games, n_players), dtype=np.float32)
    next_advantage = np.zeros((n_games, n_players), dtype=np.float32)
    has_next = np.zeros((n_games, n_players), dtype=bool)
    shaped_to_end = np.zeros((n_games, 2), dtype=np.float32)  # shaping from step t to the end
    shaped_at_next = np.zeros((n_games, n_players), dtype=np.float32)  # ... at the seat's next decision
    outcome_of_seat = rewards[:, seat_team].astype(np.float32)  # (B, n)
    per_step_adv: list[np.ndarray] = []
    per_step_out: list[np.ndarray] = []
    step_of_game = len(shaping) - 1
    for t in range(len(steps) - 1, -1, -1):
        games, seats, values = steps[t]["games"], steps[t]["seats"], steps[t]["values"].astype(np.float32)
        step_index = steps[t]["step"]
        while step_of_game >= step_index:
            shaped_to_end += shaping[step_of_game]
            step_of_game -= 1
        shaped_now = shaped_to_end[games, seat_team[seats]]
        follow = has_next[games, seats]
        reward = shaped_now - shaped_at_next[games, seats] + np.where(follow, 0.0, outcome_of_seat[games, seats])
        bootstrap = np.where(follow, next_value[games, seats], 0.0)
        delta = reward + gamma * bootstrap - values
        advantage = delta + np.where(follow, gamma * gae_lambda * next_advantage[games, seats], 0.0)
        per_step_adv.append(advantage.astype(np.float32))
        per_step_out.append(shaped_now + outcome_of_seat[games, seats])
        next_value[games, seats] = values
        next_advantage[games, seats] = advantage
        has_next[games, seats] = True
        shaped_at_next[games, seats] = shaped_now
    return np.concatenate(per_step_adv[::-1]), np.concatenate(per_step_out[::-1])
