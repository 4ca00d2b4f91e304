"""Duplicate-deal arena and league: fair, reproducible, batched comparisons of agents.

Every deal is played twice with the same cards, dealer and open card: once with agent A
on the even seats (team 0) and agent B on the odd seats, once the other way round. The
luck of the cards then cancels within each *deal pair*, so the win rate of A and its 95%
confidence interval are computed on per-pair scores (the mean of A's two results), not on
single hands, which would treat the two correlated hands as independent (see :func:`mean_ci`).

Everything runs on the batched core (``mendikot_env.core``): all hands of a chunk step
together, and each agent acts once per step on the rows where its team is to act.

Example:
    >>> from agents import make
    >>> rules = Rules()
    >>> result = duplicate_arena(rules, make("hard", rules), make("random", rules, seed=1), deals=64, seed=0)
    >>> 0.0 <= result.win_rate <= 1.0
    True
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import actions_fault, check_plays

from . import core
from .cards import NUM_ACTIONS, is_integer, set_to_cards, unpack_sets
from .match import MatchState
from .observation import ObservationEncoder, reads_history
from .rules import Rules, resolve_rules
from .seeding import check_seed

# Normal quantile of a two-sided 95% interval.
Z95 = 1.959963984540054
DEFAULT_CHUNK = 1024


class AgentError(RuntimeError):
    """An agent returned something unusable (wrong shape or an illegal action)."""


# --------------------------------------------------------------------------- action log


@dataclass
class ActionLog:
    """Every action of B hands, in order, for records and replays."""

    actions: np.ndarray  # (B, L) int16: action of each step of each game, -1 past its end
    seats: np.ndarray  # (B, L) int8: seat that took it
    length: np.ndarray  # (B,) int64: actions logged per game

    @classmethod
    def empty(cls, rules: Rules, batch: int) -> ActionLog:
        # A hand is every card played, plus the band hide and at most one ask.
        steps = rules.n_players * rules.n_tricks + 2
        return cls(
            np.full((batch, steps), -1, np.int16), np.full((batch, steps), -1, np.int8), np.zeros(batch, np.int64)
        )

    def add(self, games: np.ndarray, seats: np.ndarray, actions: np.ndarray) -> None:
        """Append one action to each of ``games``."""
        pos = self.length[games]
        self.actions[games, pos] = actions
        self.seats[games, pos] = seats
        self.length[games] = pos + 1

    def entries(self, game: int) -> list[tuple[int, int]]:
        """(seat, action) pairs of one game."""
        k = int(self.length[game])
        return [(int(s), int(a)) for s, a in zip(self.seats[game, :k], self.actions[game, :k], strict=True)]


# ------------------------------------------------------------------------------ playing


def play_hands(
    state: core.State,
    agents: Sequence[Any],
    team_agent: np.ndarray,
    encoder: ObservationEncoder | None = None,
    match_score: np.ndarray | None = None,
    log: ActionLog | None = None,
) -> None:
    """Play every game of ``state`` to the end (in place).

    Args:
        state: the batch of hands to play.
        agents: the agents taking part (objects with ``act(observations, masks)``).
        team_agent: (B, 2) index into ``agents`` of the agent playing each team of each game.
        encoder: observation encoder for ``state.rules`` (made if not given; made with
            history if an agent reads it, see :func:`~mendikot_env.observation.reads_history`).
        match_score: optional (B, 2) match points, shown to the agents.
        log: optional action log to fill.

    Raises:
        AgentError: an agent returned the wrong shape or an illegal action; names the agent.
    """
    encoder = encoder or ObservationEncoder(state.rules)
    if not encoder.history and any(reads_history(agent) for agent in agents):
        encoder = ObservationEncoder(state.rules, history=True)  # the others read its prefix
    B = state.batch_size
    rows = np.arange(B)
    buffer = np.empty((B, encoder.size), dtype=np.float32)
    actions = np.zeros(B, dtype=np.int64)
    while True:
        live = ~state.done
        if not live.any():
            return
        seats = np.where(live, state.current, 0)
        acting = team_agent[rows, seats % 2]
        bits = core.legal_bits(state)
        obs = encoder.encode(state, seats, match_score, out=buffer, legal=bits)
        masks = core.legal_action_mask(state)
        actions[:] = 0
        for k, agent in enumerate(agents):
            mine = np.flatnonzero(live & (acting == k))
            if mine.size == 0:
                continue
            chosen = np.asarray(agent.act(encoder.for_agent(obs[mine], agent), masks[mine]))
            if fault := actions_fault(chosen, mine.size) or _illegal_play(state, bits, mine, chosen):
                raise AgentError(f"agent {_name(agent)!r} {fault}")
            actions[mine] = chosen
        if log is not None:
            games = np.flatnonzero(live)
            log.add(games, state.current[games], actions[games])
        core.step(state, actions, check=False)


def _illegal_play(state: core.State, bits: np.ndarray, games: np.ndarray, chosen: np.ndarray) -> str:
    """What is wrong with the first illegal action in ``chosen`` (one per game of ``games``; "" when all are legal)."""
    legal = (chosen >= 0) & (chosen < NUM_ACTIONS)
    legal &= (bits[games] & core.CARD_SETS[np.where(legal, chosen, NUM_ACTIONS)]) != 0  # no uint8 wrap
    if legal.all():
        return ""
    first = np.flatnonzero(~legal)[0]
    g, a = int(games[first]), int(chosen[first])
    return f"played illegal action {a} in game {g} (seat {int(state.current[g])}); legal: {set_to_cards(bits[g])}"


def _checked_call(
    rules: Rules | str | dict[str, Any], agents: dict[str, Any], seed: Any, counts: dict[str, tuple[Any, int]]
) -> tuple[Rules, int, list[int]]:
    """The one check of the inputs of an arena entry point (:func:`duplicate_arena`,
    :func:`duplicate_matches`, :func:`league`); the functions they call trust the result.

    Args:
        rules: a Rules, a preset name or a dict of fields.
        agents: each agent by the role its errors name ("agent A", "agents[1]").
        seed: the seed of the deals (an int: the deals must replay).
        counts: each count by its name, as ``(value, lowest allowed)``.

    Returns:
        The rules, the seed and the counts (in the order given) as plain ints.

    Raises:
        ValueError: naming the count, seed or agent that is wrong. A count of 10.0 or True
            would fail inside numpy, "10" in a comparison; a name, a class or anything
            without ``act`` at the first move; an agent built for other hands would quietly
            play the wrong game.
    """
    rules = resolve_rules(rules)
    bad = [
        f"{what} must be an integer {low} or more, got {value!r}"
        for what, (value, low) in counts.items()
        if not is_integer(value) or value < low
    ]
    if not bad:
        seed = check_seed(seed, optional=False)
        bad = [
            f"{role} must be an agent with act(observations, masks), got {agent!r}; pass "
            + (f"agents.make({agent!r}, rules)" if isinstance(agent, str) else "an instance")
            for role, agent in agents.items()
            if isinstance(agent, type) or not callable(getattr(agent, "act", None))
        ]
    if bad:
        raise ValueError(bad[0])
    for role, agent in agents.items():
        check_plays(agent, rules, role)
    return rules, seed, [int(value) for value, _ in counts.values()]


def _name(agent: Any) -> str:
    return str(getattr(agent, "name", type(agent).__name__))


# ------------------------------------------------------------------------------ results


def mean_interval(
    values: np.ndarray, z: float = Z95, bounds: tuple[float, float] | None = None
) -> tuple[float, float, float]:
    """Mean of ``values`` and its normal 95% interval: the one interval of the package.

    With ``bounds`` (the range the values can take), one pseudo-value at each bound joins
    the values for the interval, which is then clipped to the bounds (Agresti and Coull's
    adjustment): a plain normal interval of a few pairs that all went one way is a single
    point ("100%, CI 100% .. 100%"), which claims a certainty a few deals cannot give. Over
    hundreds of values the two intervals differ in the third decimal. The mean is the plain one.

    Args:
        values: independent values (per deal pair, say).
        z: the normal quantile (95% by default).
        bounds: ``(low, high)`` the values lie in, or None for an unbounded quantity.

    Returns:
        ``(mean, low, high)``; with too few values to spread, the whole range (the bounds,
        or -inf .. inf) and a nan mean for no values.
    """
    x = np.asarray(values, dtype=np.float64)
    low, high = bounds if bounds is not None else (-math.inf, math.inf)
    if x.size == 0:
        return float("nan"), low, high
    mean = float(x.mean())
    if bounds is not None:
        x = np.concatenate([x, [low, high]])
    if x.size < 2:
        return mean, low, high
    centre = float(x.mean())
    half = z * float(x.std(ddof=1)) / math.sqrt(x.size)
    return mean, max(low, centre - half), min(high, centre + half)


def mean_ci(scores: np.ndarray) -> tuple[float, float, float]:
    """Mean and 95% interval of per-pair scores in [0, 1]: :func:`mean_interval` with
    ``bounds=(0, 1)``, the interval of every win rate the arena and the notebooks report."""
    return mean_interval(scores, bounds=(0.0, 1.0))


@dataclass
class SideStats:
    """Totals for one agent over all its hands (both seatings)."""

    hands_won: int = 0
    mendikots: int = 0  # hands won with all four tens
    whitewashes: int = 0  # hands won taking every trick
    tens: int = 0  # tens taken, summed over hands
    tricks: int = 0  # tricks taken, summed over hands
    hands_hiding: int = 0  # band hukum: hands its team laid the face-down card in
    won_hiding: int = 0  # band hukum: of those, the hands it won


@dataclass
class ArenaResult:
    """The outcome of a duplicate comparison of agent A against agent B."""

    a: str
    b: str
    rules: dict[str, Any]
    seed: int
    deals: int  # deal pairs played (each deal twice)
    hands: int  # hands played: 2 * deals
    side_a: SideStats
    side_b: SideStats
    drawn: int  # drawn hands (6 or 8 players only)
    win_rate: float  # mean over deal pairs of A's score (1 win, 0.5 drawn hand, 0 loss)
    ci_low: float
    ci_high: float
    pair_sweeps: int  # deal pairs where A won both hands
    pair_splits: int  # deal pairs won once by each side (the cards decided)
    pair_losses: int  # deal pairs where B won both hands
    seconds: float
    deals_per_s: float
    matches: dict[str, Any] | None = None  # match-level results, when asked
    pair_scores: np.ndarray | None = field(default=None, repr=False)  # (deals,) A's per-pair score

    @property
    def avg_tens_a(self) -> float:
        return self.side_a.tens / max(self.hands, 1)

    @property
    def avg_tens_b(self) -> float:
        return self.side_b.tens / max(self.hands, 1)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (per-pair scores left out)."""
        out = {k: v for k, v in asdict(self).items() if k != "pair_scores"}
        out["avg_tens_a"] = self.avg_tens_a
        out["avg_tens_b"] = self.avg_tens_b
        return out

    def summary(self) -> str:
        """A short text report."""
        a, b = self.side_a, self.side_b
        h = max(self.hands, 1)
        lines = [
            f"{self.a} (A) vs {self.b} (B): {self.deals} duplicate deal pairs, {self.hands} hands",
            f"{'':<14}{'A: ' + self.a:>16}{'B: ' + self.b:>16}",
            f"{'hands won':<14}{a.hands_won:>16}{b.hands_won:>16}",
            f"{'mendikots':<14}{a.mendikots:>16}{b.mendikots:>16}",
            f"{'whitewashes':<14}{a.whitewashes:>16}{b.whitewashes:>16}",
            f"{'avg tens':<14}{a.tens / h:>16.3f}{b.tens / h:>16.3f}",
            f"{'avg tricks':<14}{a.tricks / h:>16.3f}{b.tricks / h:>16.3f}",
        ]
        if a.hands_hiding:  # band hukum: the same deals with each team hiding, so the two rows compare
            won_a, won_b = f"{a.won_hiding} of {a.hands_hiding}", f"{b.won_hiding} of {b.hands_hiding}"
            lines.append(f"{'won hiding':<14}{won_a:>16}{won_b:>16}")
        if self.drawn:
            lines.append(f"drawn hands: {self.drawn}")
        lines.append(
            f"deal pairs: A won both {self.pair_sweeps}, split {self.pair_splits}, B won both {self.pair_losses}"
            + (
                f", with a drawn hand {self.deals - self.pair_sweeps - self.pair_splits - self.pair_losses}"
                if self.drawn
                else ""
            )
        )
        lines.append(
            f"win rate of A: {100 * self.win_rate:.1f}%  (95% CI {100 * self.ci_low:.1f}% .. {100 * self.ci_high:.1f}%,"
            " on per-deal-pair scores)"
        )
        if self.matches:
            m = self.matches
            lines.append(
                f"matches: {m['pairs']} duplicate match pairs, A won {m['a_won']}, B won {m['b_won']}, "
                f"drawn {m['drawn']}; match win rate of A {100 * m['win_rate']:.1f}% "
                f"(95% CI {100 * m['ci_low']:.1f}% .. {100 * m['ci_high']:.1f}%)"
            )
        lines.append(
            f"{self.deals_per_s:,.0f} deal pairs/s ({2 * self.deals_per_s:,.0f} hands/s), {self.seconds:.1f} s"
        )
        return "\n".join(lines)


# ------------------------------------------------------------------------------- arena


def _chunk_rng(seed: int, chunk: int) -> np.random.Generator:
    """Independent deal stream per chunk, so a chunk's deals depend only on (seed, chunk)."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), int(chunk)]))


def duplicate_arena(
    rules: Rules | str | dict[str, Any],
    agent_a: Any,
    agent_b: Any,
    deals: int,
    seed: int = 0,
    chunk: int = DEFAULT_CHUNK,
    progress: bool = False,
    on_hand: Callable[[core.State, ActionLog, np.ndarray, np.ndarray], None] | None = None,
    matches: int = 0,
) -> ArenaResult:
    """Play ``deals`` duplicate deal pairs of A against B.

    Args:
        rules: the rule set (a Rules, a preset name or a dict of fields).
        agent_a: agent A.
        agent_b: agent B (it may be the same object as A).
        deals: number of deal pairs (each deal is played twice).
        seed: seed of the deals; the same seed gives the same deals for every pair of agents.
        chunk: deal pairs played per batch (2 * chunk hands step together).
        progress: show a progress bar (tqdm) on stderr.
        on_hand: called after each chunk as ``on_hand(state, log, pair_index, a_team)`` (e.g. to save
            records); ``pair_index[g]`` is the deal pair of game g and ``a_team[g]`` the team A played.
        matches: also play this many duplicate match pairs (see :func:`duplicate_matches`).

    Returns:
        The ArenaResult (win rate of A with a 95% CI on per-pair scores, and the totals).

    Raises:
        ValueError: a count that is not an integer at least its minimum, a bad seed, or an
            agent that is not one or was built for hands played otherwise.
        AgentError: an agent returned the wrong shape or an illegal action.
    """
    counts = {"deals": (deals, 1), "chunk (deal pairs per batch)": (chunk, 1), "matches": (matches, 0)}
    rules, seed, (deals, chunk, matches) = _checked_call(rules, {"agent A": agent_a, "agent B": agent_b}, seed, counts)
    result = _play_arena(rules, agent_a, agent_b, deals, seed, chunk, progress, on_hand)
    if matches:
        result.matches = _play_matches(rules, agent_a, agent_b, matches, seed, progress)
    return result


def _play_arena(
    rules: Rules,
    agent_a: Any,
    agent_b: Any,
    deals: int,
    seed: int,
    chunk: int,
    progress: bool,
    on_hand: Callable[[core.State, ActionLog, np.ndarray, np.ndarray], None] | None = None,
) -> ArenaResult:
    """:func:`duplicate_arena` on checked inputs, without the matches."""
    encoder = ObservationEncoder(rules)
    side = [SideStats(), SideStats()]
    pair_scores = np.empty(deals, dtype=np.float64)
    drawn = 0
    bar = _progress(deals, progress, f"{_name(agent_a)} vs {_name(agent_b)}")
    start = time.perf_counter()
    for c, first in enumerate(range(0, deals, chunk)):
        d = min(chunk, deals - first)
        base = core.new_hands(rules, d, _chunk_rng(seed, c))
        state = base.select(np.concatenate([np.arange(d), np.arange(d)]))
        a_team = np.repeat(np.array([0, 1]), d)
        log = ActionLog.empty(rules, 2 * d) if on_hand is not None else None
        play_hands(state, [agent_a, agent_b], _team_agent(a_team), encoder, log=log)
        results = core.hand_results(state)
        score = _a_scores(results.winner, a_team)
        pair_scores[first : first + d] = (score[:d] + score[d:]) / 2
        drawn += int(np.count_nonzero(results.winner < 0))
        _add_side_stats(side, results, a_team, state.hider)
        if on_hand is not None:
            on_hand(state, log, first + np.tile(np.arange(d), 2), a_team)
        bar.update(d)
    bar.close()
    seconds = time.perf_counter() - start
    mean, low, high = mean_ci(pair_scores)
    return ArenaResult(
        a=_name(agent_a),
        b=_name(agent_b),
        rules=rules.to_dict(),
        seed=seed,
        deals=deals,
        hands=2 * deals,
        side_a=side[0],
        side_b=side[1],
        drawn=drawn,
        win_rate=mean,
        ci_low=low,
        ci_high=high,
        pair_sweeps=int(np.count_nonzero(pair_scores == 1.0)),
        pair_splits=int(np.count_nonzero(pair_scores == 0.5)),
        pair_losses=int(np.count_nonzero(pair_scores == 0.0)),
        seconds=seconds,
        deals_per_s=deals / max(seconds, 1e-9),
        pair_scores=pair_scores,
    )


def _team_agent(a_team: np.ndarray) -> np.ndarray:
    """(B, 2) index of the agent playing each team: A (0) on ``a_team``, B (1) on the other."""
    return np.stack([np.where(a_team == 0, 0, 1), np.where(a_team == 0, 1, 0)], axis=1)


def _a_scores(winner: np.ndarray, a_team: np.ndarray) -> np.ndarray:
    """Score of A per hand: 1 for a win, 0.5 for a drawn hand, 0 for a loss."""
    return np.where(winner < 0, 0.5, (winner == a_team).astype(np.float64))


def _add_side_stats(side: list[SideStats], results: core.HandResults, a_team: np.ndarray, hider: np.ndarray) -> None:
    rows = np.arange(a_team.size)
    for k, team in enumerate((a_team, 1 - a_team)):
        won = results.winner == team
        hiding = (hider >= 0) & (hider % 2 == team)  # no hider (NO_SEAT) outside band hukum
        side[k].hands_hiding += int(np.count_nonzero(hiding))
        side[k].won_hiding += int(np.count_nonzero(won & hiding))
        side[k].hands_won += int(np.count_nonzero(won))
        side[k].mendikots += int(np.count_nonzero(won & results.mendikot))
        side[k].whitewashes += int(np.count_nonzero(won & results.whitewash))
        side[k].tens += int(results.tens[rows, team].sum())
        side[k].tricks += int(results.tricks[rows, team].sum())


def _progress(total: int, enabled: bool, desc: str) -> Any:
    """A tqdm bar, or a do-nothing stand-in when disabled."""
    if not enabled:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="deal", leave=False, dynamic_ncols=True)


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


# ----------------------------------------------------------------------------- matches


def duplicate_matches(
    rules: Rules | str | dict[str, Any], agent_a: Any, agent_b: Any, pairs: int, seed: int = 0, progress: bool = False
) -> dict[str, Any]:
    """Play ``pairs`` duplicate matches to the rules' target.

    Both matches of a pair start with the same dealer and get the same cards for their k-th
    hand; the dealer then follows each match's own results (the rotation rule), so the
    pairing is as close as a match allows.

    Args:
        rules: the rule set (a Rules, a preset name or a dict of fields).
        agent_a: agent A.
        agent_b: agent B.
        pairs: duplicate match pairs to play.
        seed: seed of the deals.
        progress: show a progress bar (tqdm) on stderr.

    Returns:
        A dict: pairs, a_won, b_won, drawn, win_rate of A with its 95% CI (per-pair
        scores), mean hands per match.
    """
    agents = {"agent A": agent_a, "agent B": agent_b}
    rules, seed, (pairs,) = _checked_call(rules, agents, seed, {"match pairs": (pairs, 1)})
    return _play_matches(rules, agent_a, agent_b, pairs, seed, progress)


def _play_matches(rules: Rules, agent_a: Any, agent_b: Any, pairs: int, seed: int, progress: bool) -> dict[str, Any]:
    """:func:`duplicate_matches` on checked inputs."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1 << 20]))
    encoder = ObservationEncoder(rules)
    first = rng.integers(0, rules.n_players, size=pairs)
    games = 2 * pairs
    pair_of = np.tile(np.arange(pairs), 2)
    a_team = np.repeat(np.array([0, 1]), pairs)
    match = MatchState.start(first[pair_of])
    bar = _progress(pairs, progress, "matches")
    finished = 0
    while not match.over.all():
        base = core.new_hands(rules, pairs, rng)
        live = np.flatnonzero(~match.over)
        state = core.new_hands(
            rules,
            live.size,
            deals=deal_cards(base)[pair_of[live]],
            dealers=match.dealer[live],
            open_cards=base.open_card[pair_of[live]] if rules.trump_known_from_start else None,
        )
        play_hands(state, [agent_a, agent_b], _team_agent(a_team[live]), encoder, match_score=match.scores[live])
        match.record(rules, core.hand_results(state), live)
        done_now = int(match.over.reshape(2, pairs).all(axis=0).sum())
        bar.update(done_now - finished)
        finished = done_now
    bar.close()
    winner = match.winner()
    score = _a_scores(winner, a_team)
    mean, low, high = mean_ci((score[:pairs] + score[pairs:]) / 2)
    return {
        "pairs": pairs,
        "a_won": int(np.count_nonzero(winner == a_team)),
        "b_won": int(np.count_nonzero((winner >= 0) & (winner != a_team))),
        "drawn": int(np.count_nonzero(winner < 0)),
        "win_rate": mean,
        "ci_low": low,
        "ci_high": high,
        "hands_per_match": float(match.deals.sum() / games),
    }


def deal_cards(state: core.State) -> np.ndarray:
    """(B, n, hand_size) card ids dealt to each seat of each game (ascending per seat): what
    ``core.new_hands(deals=...)`` takes to deal the same cards again."""
    flags = unpack_sets(state.deal)
    B, n = state.deal.shape
    return np.nonzero(flags)[2].reshape(B, n, -1)


# ------------------------------------------------------------------------------ league


def bradley_terry(wins: np.ndarray, games: np.ndarray, iterations: int = 1000, prior: float = 0.5) -> np.ndarray:
    """Bradley-Terry strengths from pairwise results, as Elo-scale ratings with mean 1500.

    ``wins[i, j]`` is i's score against j (drawn hands count half) out of ``games[i, j]``.
    A small prior (``prior`` wins and losses against a virtual average player) keeps the
    fit finite when an agent wins or loses every game. Fitted with Hunter's MM updates.
    """
    wins = np.asarray(wins, dtype=np.float64)
    games = np.asarray(games, dtype=np.float64)
    k = wins.shape[0]
    strength = np.ones(k)
    for _ in range(iterations):
        denom = (games / (strength[:, None] + strength[None, :])).sum(axis=1) + 2 * prior / (strength + 1.0)
        new = (wins.sum(axis=1) + prior) / denom
        new /= np.exp(np.log(new).mean())
        if np.max(np.abs(new - strength)) < 1e-12:
            strength = new
            break
        strength = new
    return 1500 + 400 * np.log10(strength)


@dataclass
class LeagueResult:
    """All pairs of several agents, played with the same deals."""

    names: list[str]
    rules: dict[str, Any]
    seed: int
    deals: int
    win_rate: np.ndarray  # (k, k): win rate of row against column, NaN on the diagonal
    ci_low: np.ndarray  # (k, k)
    ci_high: np.ndarray  # (k, k)
    ratings: np.ndarray  # (k,) Bradley-Terry ratings on the Elo scale (mean 1500)
    pairs: list[ArenaResult]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        def grid(x: np.ndarray) -> list[list[float | None]]:
            return [[None if np.isnan(v) else float(v) for v in row] for row in x]

        return {
            "names": self.names,
            "rules": self.rules,
            "seed": self.seed,
            "deals": self.deals,
            "win_rate": grid(self.win_rate),
            "ci_low": grid(self.ci_low),
            "ci_high": grid(self.ci_high),
            "ratings": {n: float(r) for n, r in zip(self.names, self.ratings, strict=True)},
            "pairs": [p.to_dict() for p in self.pairs],
            "seconds": self.seconds,
        }

    def summary(self) -> str:
        width = max(10, *(len(n) + 2 for n in self.names))
        head = f"{'row vs col':<{width}}" + "".join(f"{n:>{width}}" for n in self.names) + f"{'rating':>{width}}"
        lines = [f"league: {len(self.names)} agents, {self.deals} duplicate deal pairs per pairing", head]
        order = np.argsort(-self.ratings)
        for i in order:
            cells = "".join(
                f"{'-':>{width}}" if i == j else f"{100 * self.win_rate[i, j]:>{width - 1}.1f}%"
                for j in range(len(self.names))
            )
            lines.append(f"{self.names[i]:<{width}}{cells}{self.ratings[i]:>{width}.0f}")
        lines.append("cells: win rate of the row agent against the column agent (hands, duplicate deals)")
        lines.append("ratings: Bradley-Terry fit on the hand results, Elo scale, mean 1500")
        lines.append(f"{self.seconds:.1f} s")
        return "\n".join(lines)


def league(
    rules: Rules | str | dict[str, Any],
    agents: Sequence[Any],
    deals: int,
    seed: int = 0,
    chunk: int = DEFAULT_CHUNK,
    progress: bool = False,
    names: Sequence[str] | None = None,
) -> LeagueResult:
    """Every pair of ``agents`` in the duplicate arena, on the same deals, plus ratings.

    Args:
        rules: the rule set (a Rules, a preset name or a dict of fields).
        agents: two agents or more.
        deals: deal pairs per pairing.
        seed: seed of the deals (the same for every pairing).
        chunk: deal pairs played per batch.
        progress: show a progress bar (tqdm) on stderr.
        names: display names, one per agent (default: the agents' names, numbered when two agree).

    Returns:
        The LeagueResult: the win-rate matrix with its intervals, and Bradley-Terry ratings.
    """
    k = len(agents)
    if k < 2:
        problem = "a league needs at least two agents"
    elif names is not None and len(names) != k:
        problem = f"names needs one name per agent: {k}, got {len(names)} ({list(names)})"
    else:
        problem = ""
    if problem:
        raise ValueError(problem)
    roles = {f"agents[{i}]": agent for i, agent in enumerate(agents)}
    counts = {"deals": (deals, 1), "chunk (deal pairs per batch)": (chunk, 1)}
    rules, seed, (deals, chunk) = _checked_call(rules, roles, seed, counts)
    names = list(names) if names is not None else [_name(a) for a in agents]
    if len(set(names)) != k:
        names = [f"{n}#{i}" for i, n in enumerate(names)]
    rate, low, high = np.full((k, k), np.nan), np.full((k, k), np.nan), np.full((k, k), np.nan)
    wins, games = np.zeros((k, k)), np.zeros((k, k))
    pairs = []
    start = time.perf_counter()
    for i, j in itertools.combinations(range(k), 2):
        r = _play_arena(rules, agents[i], agents[j], deals, seed, chunk, progress)
        r.a, r.b = names[i], names[j]
        pairs.append(r)
        rate[i, j], low[i, j], high[i, j] = r.win_rate, r.ci_low, r.ci_high
        rate[j, i], low[j, i], high[j, i] = 1 - r.win_rate, 1 - r.ci_high, 1 - r.ci_low
        wins[i, j] = r.win_rate * r.hands
        wins[j, i] = r.hands - wins[i, j]
        games[i, j] = games[j, i] = r.hands
    return LeagueResult(
        names=names,
        rules=rules.to_dict(),
        seed=seed,
        deals=deals,
        win_rate=rate,
        ci_low=low,
        ci_high=high,
        ratings=bradley_terry(wins, games),
        pairs=pairs,
        seconds=time.perf_counter() - start,
    )


def write_json(path: str | Path, payload: dict[str, Any]) -> None:
    """Write a results dict as indented JSON (creating parent folders)."""
    import json

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2) + "\n")
